"""Runtime layer: settings read lazily from the environment, observability, composition root."""
