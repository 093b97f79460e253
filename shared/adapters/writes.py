"""Adapters layer: the write both stores accept besides the port's ``Write`` records.

``TokenCreated``: the hashed session token's lookup item, which ``create_player`` commits with
its player (create-only: a taken hash fails the commit with ``ConflictError``). No boto3."""


class TokenCreated:
    """Internal write: the hashed session token's lookup item. ``used_ms``: the new player's
    ``token_used_ms``, from which the item's TTL is set (its player's own,
    ``schema.idle_player_ttl``); None: no TTL."""

    def __init__(self, token_hash: str, player_id: str, used_ms: int | None = None) -> None:
        self.token_hash = token_hash
        self.player_id = player_id
        self.used_ms = used_ms
