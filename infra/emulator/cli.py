"""Local runtime: the command line, ``python -m infra.emulator``.

Parses the options, starts an :class:`~infra.emulator.emulator.Emulator`, prints the URLs and runs
until Ctrl-C (SIGINT) or SIGTERM, then shuts down cleanly (sockets closed with 1001 and their
``$disconnect`` delivered, clock stopped, embedded DynamoDB stopped).

API Gateway's limits and failure modes (defaults are AWS's; see :mod:`infra.emulator.gateway`):
``--idle-timeout-seconds`` (600: a connection silent both ways that long is closed with 1001),
``--max-connection-seconds`` (7200: every connection is closed with 1001 at that age),
``--disconnect-loss`` (0: share of closes, 0..1, whose ``$disconnect`` never runs),
``--half-open-seconds`` (0 = off: how long a vanished client's connection still accepts posts)
and ``--gateway-seed`` (seeds the ``$disconnect`` losses). E.g. to watch clients reconnect and
resume: ``python -m infra.emulator --bots 7 --max-connection-seconds 30 --disconnect-loss 0.3``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
import sys
import warnings
from collections.abc import Sequence

from infra.emulator.emulator import Emulator
from infra.emulator.throttles import ColdStarts, TwinLimits
from infra.limits import STAGE_LIMITS
from shared.domain.languages import LANGUAGE_CODES
from shared.protocol.limits import IDLE_TIMEOUT_SECONDS, MAX_CONNECTION_SECONDS

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m infra.emulator",
        description="Run the Wordle Tournament backend on this machine (no AWS account needed).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 = free)")
    parser.add_argument(
        "--bots",
        type=int,
        default=0,
        metavar="N",
        help="N bots keep the lobbies of every language a player joins filled (default 0)",
    )
    parser.add_argument(
        "--bots-language",
        type=_languages,
        default=("en",),
        metavar="CODES",
        help="languages whose lobbies get their N bots from the start, comma-separated, or"
        " 'all' (default en; any other language gets its bots when a player first joins it)",
    )
    parser.add_argument(
        "--turn-seconds", type=float, help="turn clock (default: TURN_SECONDS or 30)"
    )
    parser.add_argument(
        "--intro-seconds", type=float, help="round intro (default: INTRO_SECONDS or 6)"
    )
    parser.add_argument(
        "--reconnect-seconds",
        type=float,
        help="reconnect deadline (default: RECONNECT_SECONDS or 60)",
    )
    parser.add_argument(
        "--idle-timeout-seconds",
        type=float,
        default=IDLE_TIMEOUT_SECONDS,
        metavar="S",
        help="close a connection silent both ways for S seconds, 1001 (default %(default)s, AWS)",
    )
    parser.add_argument(
        "--max-connection-seconds",
        type=float,
        default=MAX_CONNECTION_SECONDS,
        metavar="S",
        help="close every connection at this age, 1001 (default %(default)s, AWS: 2 hours)",
    )
    parser.add_argument(
        "--disconnect-loss",
        type=_share,
        default=0.0,
        metavar="P",
        help="share of closes whose $disconnect never runs, 0..1 (default 0)",
    )
    parser.add_argument(
        "--half-open-seconds",
        type=float,
        default=0.0,
        metavar="S",
        help="a dropped client's connection still accepts posts for S seconds (default 0: off)",
    )
    parser.add_argument(
        "--gateway-seed", type=int, metavar="N", help="random seed of the $disconnect losses"
    )
    parser.add_argument(
        "--dynamodb-endpoint",
        metavar="URL",
        help="use this DynamoDB instead of the embedded moto server (e.g. DynamoDB Local or a"
        " real endpoint); not another running local runtime's: each runtime reaches only its"
        " own connections, so two on one database take each other's players for disconnected",
    )
    parser.add_argument("--table-name", help="DynamoDB table (default: TABLE_NAME or the schema's)")
    parser.add_argument(
        "--limits",
        default="prod",
        choices=[*STAGE_LIMITS, "off"],
        help="enforce this deployed stage's throttles, reserved concurrency and function"
        " timeouts (infra/limits.py; default prod; off: none)",
    )
    parser.add_argument(
        "--limits-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every throttle's rate and burst by F (e.g. 0.02: prod's 6,000 msg/s"
        " default route throttle becomes 120/s)",
    )
    parser.add_argument(
        "--cold-starts",
        type=_share,
        default=None,
        metavar="P",
        help="inject cold starts (the model of python -m infra.benchmarks.grace, per function):"
        " new environments start cold, and any invocation with probability P (0..1)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for the emulator and the handlers (default INFO)",
    )
    return parser


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be within 0..1, got {text}")
    return value


def _languages(text: str) -> tuple[str, ...]:
    if text.strip() == "all":
        return LANGUAGE_CODES
    codes = tuple(code.strip() for code in text.split(",") if code.strip())
    unknown = [code for code in codes if code not in LANGUAGE_CODES]
    if unknown or not codes:
        raise argparse.ArgumentTypeError(
            f"not game languages: {', '.join(unknown) or repr(text)}"
            f" (one of {', '.join(LANGUAGE_CODES)})"
        )
    return codes


def emulator_from_args(args: argparse.Namespace) -> Emulator:
    return Emulator(
        host=args.host,
        port=args.port,
        bots=args.bots,
        bots_languages=args.bots_language,
        turn_seconds=args.turn_seconds,
        intro_seconds=args.intro_seconds,
        reconnect_seconds=args.reconnect_seconds,
        dynamodb_endpoint=args.dynamodb_endpoint,
        table_name=args.table_name,
        log_level=args.log_level,
        idle_timeout_seconds=args.idle_timeout_seconds,
        max_connection_seconds=args.max_connection_seconds,
        disconnect_loss=args.disconnect_loss,
        half_open_seconds=args.half_open_seconds,
        gateway_seed=args.gateway_seed,
        limits=_limits(args),
    )


def _limits(args: argparse.Namespace) -> TwinLimits | None:
    cold = None
    if args.cold_starts is not None:
        from infra.benchmarks.grace import cold_start_model

        cold = ColdStarts(cold_start_model(), jitter=0.25, share=args.cold_starts)
    if args.limits == "off":
        return None if cold is None else TwinLimits(cold_starts=cold)
    return TwinLimits.for_stage(args.limits, scale=args.limits_scale, cold_starts=cold)


def _limits_line(emu: Emulator) -> str:
    throttles = emu.limits.throttles if emu.limits is not None else None
    if throttles is None:
        return "off"
    limits = throttles.limits
    routes = ", ".join(f"{k} {t.rate:g}/s" for k, t in sorted(limits.routes.items()))
    return f"{limits.name}: routes {limits.stage.rate:g}/s by default ({routes})"


def banner(emu: Emulator) -> str:
    return "\n".join(
        [
            "Wordle Tournament — local runtime",
            f"  web client      {emu.url}/",
            f"  WebSocket API   {emu.ws_url}",
            f"  @connections    {emu.callback_url}/@connections/{{connectionId}}",
            f"  DynamoDB        {emu.dynamodb_endpoint} (table {emu.table_name})",
            f"  limits          idle timeout {emu.idle_timeout_seconds:g} s, connections closed"
            f" at {emu.max_connection_seconds:g} s, $disconnect loss {emu.disconnect_loss:g},"
            f" half-open {emu.half_open_seconds:g} s",
            f"  throttles       {_limits_line(emu)}",
            "Press Ctrl-C to stop.",
        ]
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C / SIGTERM (exit code 0) or until the runtime can no longer serve
    (``Emulator.wait_failure``: the reason on stderr, exit code 1). A start-up that fails (the
    port in use, the DynamoDB process not starting) prints why and returns 1; Ctrl-C during
    start-up returns 130 quietly."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):  # Windows: KeyboardInterrupt instead
            loop.add_signal_handler(sig, stop.set)
    emu = emulator_from_args(args)
    try:
        await emu.start()
    except (OSError, RuntimeError) as exc:
        if stop.is_set():
            return 130
        log.debug("start-up failed", exc_info=True)
        hint = (
            f" (port {args.port}: choose another with --port)"
            if getattr(exc, "errno", None) == errno.EADDRINUSE
            else ""
        )
        print(f"infra.emulator: could not start: {exc}{hint}", file=sys.stderr, flush=True)
        return 1
    try:
        print(banner(emu), flush=True)
        stopping = asyncio.ensure_future(stop.wait())
        failing = asyncio.ensure_future(emu.wait_failure())
        await asyncio.wait({stopping, failing}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        failing.cancel()
        if not stop.is_set() and failing.done() and not failing.cancelled():
            print(f"infra.emulator: {failing.result()}; stopping", file=sys.stderr, flush=True)
            return 1
        print("stopping…", flush=True)
        return 0
    finally:
        await emu.stop()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # Metrics are disabled locally; Powertools still warns on every invocation without any.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    if args.log_level != "DEBUG":
        # one access-log line per DynamoDB call / @connections post drowns everything else
        for noisy in ("werkzeug", "botocore.credentials", "aiohttp.access"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:  # no signal handlers on this platform: Ctrl-C is the stop
        return 0


if __name__ == "__main__":
    sys.exit(main())
