"""Local runtime: the embedded DynamoDB in its own process, so its CPU is not the handlers'.

:class:`DynamoProcess` runs :class:`~infra.emulator.dynamo.EmbeddedDynamo` in a child process
(``forkserver``, this module preloaded) and answers the handlers' DynamoDB calls over one
``multiprocessing`` pipe, one request at a time (``(method, url, headers, body)`` out,
``(status, headers, body)`` back; botocore still runs in the handler,
:class:`infra.emulator.inprocess.DynamoTransport`). The child also serves moto's HTTP endpoint
(:attr:`DynamoProcess.endpoint`) for outside clients, not for another runtime. It ignores
SIGINT and exits when the pipe closes; if it exits on its own, ``on_exit`` gets its exit code
once. Why: ``shared/domain/RULINGS.md``, design notes, "moto in its own process".
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import signal
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)

START_TIMEOUT_SECONDS = 60.0
"""How long :meth:`DynamoProcess.start` waits for the child to report its endpoint."""
STOP_TIMEOUT_SECONDS = 5.0
"""How long :meth:`DynamoProcess.stop` waits for the child to exit before terminating it."""

_PRELOAD = ["infra.emulator.dynamo_process", "infra.emulator.inprocess", "moto.dynamodb"]


def _context() -> Any:
    """The ``forkserver`` start method (POSIX), preloading moto; else ``spawn``."""
    try:
        context = multiprocessing.get_context("forkserver")
    except ValueError:  # no forkserver on this platform
        return multiprocessing.get_context("spawn")
    context.set_forkserver_preload(_PRELOAD)
    return context


class DynamoProcess:
    """moto's DynamoDB (:class:`~infra.emulator.dynamo.EmbeddedDynamo`) in a child process.

    :meth:`start` blocks until the child serves (``RuntimeError`` with the child's error if it
    cannot); :attr:`endpoint` is its HTTP endpoint; :meth:`answer` sends one request over the
    pipe and returns moto's ``(status, headers, body)``, thread-safe (one request at a time);
    :meth:`stop` closes the pipe and waits for the child. Each start begins with an empty
    database (a new child). ``on_exit(exit_code)`` is called once, on a watcher thread, if the
    child exits while running (not through :meth:`stop`).
    """

    def __init__(
        self, host: str = "127.0.0.1", *, on_exit: Callable[[int | None], None] | None = None
    ) -> None:
        self._host = host
        self._on_exit = on_exit
        self._process: Any = None
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self._endpoint: str | None = None
        self._stopping = threading.Event()

    def start(self) -> DynamoProcess:
        """Start the child and wait until it serves; returns self. ``RuntimeError`` if it cannot
        (the forkserver or the child died, moto failed to start, or no answer in
        :data:`START_TIMEOUT_SECONDS`)."""
        context = _context()
        parent, child = context.Pipe()
        process = context.Process(
            target=_serve, args=(child, self._host), name="dynamodb", daemon=True
        )
        self._stopping = stopping = threading.Event()  # this child's: a restart gets its own
        try:
            process.start()
        except (EOFError, OSError) as exc:  # the forkserver died (e.g. Ctrl-C while it loads)
            parent.close()
            child.close()
            raise RuntimeError(f"could not start the DynamoDB process: {exc!r}") from exc
        child.close()
        self._process, self._conn = process, parent
        if not parent.poll(START_TIMEOUT_SECONDS):
            self.stop()
            raise RuntimeError(f"DynamoDB process did not start in {START_TIMEOUT_SECONDS} s")
        try:
            kind, value = parent.recv()
        except EOFError:
            kind, value = "error", f"DynamoDB process exited with code {process.exitcode}"
        if kind != "ready":
            self.stop()
            raise RuntimeError(f"DynamoDB process failed to start: {value}")
        self._endpoint = value
        log.info("DynamoDB (moto) in process %s on %s", process.pid, value)
        threading.Thread(
            target=self._watch, args=(process, stopping), name="dynamodb-watch", daemon=True
        ).start()
        return self

    def _watch(self, process: Any, stopping: threading.Event) -> None:
        """Wait for the child to exit; tell ``on_exit`` unless :meth:`stop` ended it. (It waits
        on the process's sentinel, not ``join``: :meth:`stop` joins, and two joins racing to read
        the forkserver's exit status could lose it.)"""
        multiprocessing.connection.wait([process.sentinel])
        if stopping.is_set():
            return
        if self._on_exit is not None:  # the listener reports it (the emulator: once, with why)
            self._on_exit(process.exitcode)
        else:
            log.error("the DynamoDB process %s exited (code %s)", process.pid, process.exitcode)

    @property
    def endpoint(self) -> str:
        """``http://host:port`` of moto's server in the child."""
        assert self._endpoint is not None, "start() first"
        return self._endpoint

    @property
    def pid(self) -> int | None:
        """The child's process id (None before :meth:`start`)."""
        return self._process.pid if self._process is not None else None

    def answer(
        self, method: str, url: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """moto's answer to one DynamoDB HTTP request: ``(status, headers, body)``.

        ``ConnectionError`` if the child is gone (stopped, or died); ``RuntimeError`` if moto
        raised (a moto bug: its own errors are HTTP answers), as it would in-process."""
        with self._lock:
            conn = self._conn
            if conn is None:
                raise ConnectionError("the DynamoDB process is not running")
            try:
                conn.send((method, url, headers, body))
                kind, result = conn.recv()
            except (EOFError, OSError) as exc:
                raise ConnectionError("the DynamoDB process is gone") from exc
        if kind != "ok":
            raise RuntimeError(f"moto's DynamoDB failed on {method} {url}: {result}")
        answer: tuple[int, dict[str, str], bytes] = result
        return answer

    def stop(self) -> None:
        """Close the pipe (the child then exits) and wait for it; idempotent."""
        self._stopping.set()
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        process, self._process = self._process, None
        if process is not None:
            process.join(STOP_TIMEOUT_SECONDS)
            if process.is_alive():
                log.warning("DynamoDB process %s did not exit: terminating it", process.pid)
                process.terminate()
                process.join(STOP_TIMEOUT_SECONDS)
        self._endpoint = None

    def __enter__(self) -> DynamoProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _serve(conn: Connection, host: str) -> None:
    """The child: moto's server on ``host``, then one pipe request at a time until EOF."""
    from infra.emulator.dynamo import EmbeddedDynamo
    from infra.emulator.inprocess import moto_dynamodb_answer

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        dynamo = EmbeddedDynamo(host).start()
    except Exception as exc:  # reported to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    try:
        conn.send(("ready", dynamo.endpoint))
        lock = dynamo.lock
        while True:
            try:
                method, url, headers, body = conn.recv()
            except (EOFError, OSError):
                break
            try:
                answer: tuple[str, Any] = (
                    "ok",
                    moto_dynamodb_answer(method, url, headers, body, lock),
                )
            except Exception as exc:  # moto's bug, not the child's end: the caller raises it
                log.exception("moto failed on %s %s", method, url)
                answer = ("error", f"{type(exc).__name__}: {exc}")
            conn.send(answer)
    finally:
        dynamo.stop()
