"""Local runtime: the stand-in for IAM on ``@connections``. The runtime draws its own
:class:`RuntimeCredentials` at start and hands them to its handlers as Lambda hands a function
its role's; :func:`verify` is the SigV4 check every Management API request must pass, refusing
as API Gateway does (403, ``x-amzn-ErrorType``). Sources and each refusal's wording:
``shared/domain/RULINGS.md``, Design notes, "Local runtime".
"""

from __future__ import annotations

import hmac
import re
import secrets
import string
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from hashlib import sha256

from botocore.auth import SIGV4_TIMESTAMP, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

SERVICE = "execute-api"
"""The signing name of the Management API (its endpoint prefix)."""

MAX_SKEW = timedelta(minutes=5)
"""How far a request's ``X-Amz-Date`` may be from now (SigV4: 5 minutes)."""

_KEY_ID_ALPHABET = string.ascii_uppercase + string.digits
_STAMP = re.compile(r"[0-9]{8}T[0-9]{6}Z")


@dataclass(frozen=True)
class RuntimeCredentials:
    """Temporary-style credentials (``ASIA...`` key id, secret, session token) drawn from
    ``secrets`` by :meth:`generate`; the secret and token never show in ``repr``."""

    access_key_id: str
    secret_access_key: str = field(repr=False)
    session_token: str = field(repr=False)

    @classmethod
    def generate(cls) -> RuntimeCredentials:
        key_id = "ASIA" + "".join(secrets.choice(_KEY_ID_ALPHABET) for _ in range(16))
        return cls(key_id, secrets.token_urlsafe(30), secrets.token_urlsafe(96))

    def environ(self) -> dict[str, str]:
        """The environment variables Lambda sets from a function's execution role (and the
        older ``AWS_SECURITY_TOKEN``, which botocore reads before ``AWS_SESSION_TOKEN``: one
        left in the caller's environment would otherwise win)."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_SESSION_TOKEN": self.session_token,
            "AWS_SECURITY_TOKEN": self.session_token,
        }

    def client_kwargs(self) -> dict[str, str]:
        """``aws_access_key_id``/``aws_secret_access_key``/``aws_session_token`` for boto3."""
        return {
            "aws_access_key_id": self.access_key_id,
            "aws_secret_access_key": self.secret_access_key,
            "aws_session_token": self.session_token,
        }


@dataclass(frozen=True)
class Refusal:
    """Why a request is not authorized: API Gateway's ``x-amzn-ErrorType`` and message."""

    error_type: str
    message: str


MISSING_TOKEN = Refusal("MissingAuthenticationTokenException", "Missing Authentication Token")
INVALID_TOKEN = Refusal(
    "UnrecognizedClientException", "The security token included in the request is invalid."
)
BAD_SIGNATURE = Refusal(
    "InvalidSignatureException",
    "The request signature we calculated does not match the signature you provided. Check"
    " your AWS Secret Access Key and signing method. Consult the service documentation for"
    " details.",
)
INCOMPLETE = Refusal(
    "IncompleteSignatureException",
    "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.",
)
NO_DATE = Refusal(
    "IncompleteSignatureException",
    "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
)


def _fields(authorization: str) -> dict[str, str] | None:
    """``Credential``, ``SignedHeaders`` and ``Signature`` of an ``AWS4-HMAC-SHA256``
    ``Authorization`` header, or None when it is not one."""
    algorithm, _, rest = authorization.strip().partition(" ")
    if algorithm != "AWS4-HMAC-SHA256":
        return None
    found: dict[str, str] = {}
    for part in rest.split(","):
        name, sep, value = part.strip().partition("=")
        if sep:
            found[name] = value
    if not {"Credential", "SignedHeaders", "Signature"} <= found.keys():
        return None
    return found


def _timestamp(stamp: str) -> datetime | None:
    """``X-Amz-Date`` (``YYYYMMDDTHHMMSSZ``, UTC) as a datetime, or None (no ``strptime``: it
    costs more than the rest of the date handling)."""
    if not _STAMP.fullmatch(stamp):
        return None
    try:
        return datetime(
            int(stamp[0:4]),
            int(stamp[4:6]),
            int(stamp[6:8]),
            int(stamp[9:11]),
            int(stamp[11:13]),
            int(stamp[13:15]),
            tzinfo=UTC,
        )
    except ValueError:  # month 13 and the like
        return None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8", "replace"), b.encode("utf-8", "replace"))


def verify(
    credentials: RuntimeCredentials,
    method: str,
    url: str,
    headers: Iterable[tuple[str, str | bytes]],
    body: bytes,
    *,
    now: datetime | None = None,
) -> Refusal | None:
    """None when the request (``url`` as sent: scheme, host, raw path and query) carries a
    valid SigV4 signature by ``credentials`` for ``execute-api``; else why not. ``headers``:
    every received ``(name, value)``, values as text or bytes (botocore's prepared requests)."""
    received: dict[str, list[str]] = {}
    for name, value in headers:
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        received.setdefault(name.lower(), []).append(text)
    authorization = received.get("authorization")
    if not authorization:
        return MISSING_TOKEN
    found = _fields(authorization[0])
    if found is None:
        return INCOMPLETE
    scope = found["Credential"].split("/")
    if len(scope) != 5 or scope[3] != SERVICE or scope[4] != "aws4_request":
        return INCOMPLETE
    key_id, _day, region, _service, _ = scope
    token = (received.get("x-amz-security-token") or [""])[0]
    if not (_same(key_id, credentials.access_key_id) and _same(token, credentials.session_token)):
        return INVALID_TOKEN
    stamp = (received.get("x-amz-date") or [""])[0]
    signed_at = _timestamp(stamp)
    if signed_at is None:
        return NO_DATE
    now = now or datetime.now(UTC)
    if signed_at < now - MAX_SKEW:
        earliest = (now - MAX_SKEW).strftime(SIGV4_TIMESTAMP)
        return Refusal(
            "InvalidSignatureException",
            f"Signature expired: {stamp} is now earlier than {earliest}"
            f" ({now.strftime(SIGV4_TIMESTAMP)} - 5 min.)",
        )
    if signed_at > now + MAX_SKEW:
        latest = (now + MAX_SKEW).strftime(SIGV4_TIMESTAMP)
        return Refusal(
            "InvalidSignatureException",
            f"Signature not yet current: {stamp} is still later than {latest}"
            f" ({now.strftime(SIGV4_TIMESTAMP)} + 5 min.)",
        )
    content_hash = received.get("x-amz-content-sha256")
    if content_hash and content_hash[0] != sha256(body).hexdigest():
        return BAD_SIGNATURE  # the body is not the one signed
    request = AWSRequest(method=method.upper(), url=url, data=body)
    for name in found["SignedHeaders"].split(";"):
        for value in received.get(name, ()):
            request.headers[name] = value  # HTTPHeaders: adds, repeated headers kept
    request.context["timestamp"] = stamp
    signer = SigV4Auth(
        Credentials(key_id, credentials.secret_access_key, credentials.session_token),
        SERVICE,
        region,
    )
    canonical = signer.canonical_request(request)
    if canonical.rsplit("\n", 2)[-2] != found["SignedHeaders"]:
        return BAD_SIGNATURE  # a signed header missing here, or one botocore never signs
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if not _same(expected, found["Signature"]):
        return BAD_SIGNATURE
    return None
