"""Service layer: building blocks (``change``, ``outbox``, ``deps``, ``presenter``,
``snapshot``, ``tournament_change``, ``seating``, ``presence``) below the use cases
(``sessions``, ``matchmaking``, ``parties``, ``duels``, ``deadlines``), which never import each
other. Load, decide with the domain, save with conditions, push, schedule; the outside world
only through the ports in ``ports.py``."""
