"""Domain layer: the game rules as pure, typed, deterministic Python (stdlib only).

Nothing here imports boto3, pydantic, os.environ or reads a clock or global randomness: time
comes in as integer milliseconds and randomness as an injected ``random.Random``.
"""
