"""Infrastructure: one CDK construct per capability (table, functions, WebSocket API, clock,
monitoring); ``infra.stack`` only composes them."""
