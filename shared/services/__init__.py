"""Service layer: one use case per module. Load, decide with the domain, save with conditions,
push, schedule. Talks to the outside world only through the ports in ``ports.py``."""
