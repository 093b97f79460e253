"""Adapters layer: the write both stores accept besides the port's ``Write`` records.

``TokenCreated``: the hashed session token's lookup item, which ``create_player`` commits with
its player (create-only: a taken hash fails the commit with ``ConflictError``). No boto3."""


class TokenCreated:
    """Internal write: the hashed session token's lookup item."""

    def __init__(self, token_hash: str, player_id: str) -> None:
        self.token_hash = token_hash
        self.player_id = player_id
