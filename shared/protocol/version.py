"""Protocol layer: the wire protocol's version, ``MAJOR.MINOR``.

The major (``PROTOCOL_VERSION``) is bumped only on a change a shipped client could trip over (a
field removed or renamed, a meaning changed): a server refuses a client of another major
(``unsupported_protocol``). The minor is bumped for additive changes (optional fields, message
types, error codes, enum values), which clients of the same major must tolerate (the client
guide, "Versions"). Every change is listed in ``shared/protocol/CHANGELOG.md``. The server
sends ``protocol`` (the major), ``protocol_version`` and ``protocol_min`` in every ``session``
reply and ``PROTOCOL`` as the AsyncAPI document's ``info.version``. Stdlib only.
"""

from __future__ import annotations

import re
from typing import Final

PROTOCOL_VERSION: Final[int] = 1
"""The major version this server speaks (``session`` reply ``protocol``)."""

PROTOCOL_MINOR: Final[int] = 3
"""The newest minor version of ``PROTOCOL_VERSION`` this server speaks."""

PROTOCOL: Final[str] = f"{PROTOCOL_VERSION}.{PROTOCOL_MINOR}"
"""The version in use, ``MAJOR.MINOR`` (``session`` reply ``protocol_version``)."""

PROTOCOL_MIN: Final[str] = f"{PROTOCOL_VERSION}.0"
"""The oldest version a client may declare (``session`` reply ``protocol_min``): every minor
of the major, since minor versions only add."""

VERSION_PATTERN: Final[str] = r"^[0-9]{1,3}\.[0-9]{1,3}$"
"""What a declared version looks like (``session`` ``protocol``): ``MAJOR.MINOR``."""


def supported(version: str) -> bool:
    """True when a client declaring ``version`` (``MAJOR.MINOR``) can talk to this server: the
    same major. A newer minor is accepted too; the server answers with what it speaks."""
    if not re.fullmatch(VERSION_PATTERN, version):
        return False
    return int(version.split(".")[0]) == PROTOCOL_VERSION
