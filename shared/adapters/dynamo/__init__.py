"""Adapters layer: DynamoDB persistence (schema, item codecs, the repository)."""
