"""Entrypoints: one thin Lambda handler module per WebSocket route or timer.

Each handler: Powertools decorators -> parse -> one service call -> errors mapped in one place
(``functions._handler``). ``functions.routes.ROUTES`` maps API Gateway route keys to handlers.
"""
