"""Protocol layer: the wire protocol's version number.

Bumped only on a change a shipped client could trip over (a field removed or renamed, a meaning
changed). Adding optional fields, message types or error codes is not such a change. The server
sends it in every ``session`` reply (``protocol``) and in the AsyncAPI document's ``info.version``.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final[int] = 1
