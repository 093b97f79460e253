"""Local runtime: DynamoDB on one machine — moto's server, embedded and serialised.

moto answers each request atomically only if no other request runs at the same time: two
concurrent conditional writes can both pass their condition, an outcome AWS never produces.
:class:`EmbeddedDynamo` therefore runs moto's ``ThreadedMotoServer`` behind a WSGI middleware that
handles one request at a time (the whole request, body included). Handlers reach it through
``DYNAMODB_ENDPOINT``. Tables come from ``shared.adapters.dynamo.schema.create_tables`` — the
module CDK uses — when it exists (:func:`create_tables`).

While it runs, four patches of moto 5.2.5's DynamoDB (:mod:`infra.emulator.moto_speedups`) keep
its cost per request independent of the table's size and its history, and its answers unchanged:
transactions roll back the items they name, not a copy of every table (``ItemRollback``); a
Query reads its partition, not the whole table (``IndexedQuery``); item answers are written with
``json.dumps`` (``FastResponses``); moto forgets the items it replaced (``WeakInstanceTracking``).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from infra.emulator.moto_speedups import (
    FastResponses,
    IndexedQuery,
    ItemRollback,
    StreamRecords,
    WeakInstanceTracking,
)

log = logging.getLogger(__name__)

SCHEMA_MODULE = "shared.adapters.dynamo.schema"

_StartResponse = Callable[..., Any]
_WsgiApp = Callable[[dict[str, Any], _StartResponse], Iterable[bytes]]


class SerialisedApp:
    """WSGI middleware: one request at a time through ``app``, response body included."""

    def __init__(self, app: _WsgiApp, lock: threading.Lock | None = None) -> None:
        self.app = app
        self.lock = lock or threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: _StartResponse) -> list[bytes]:
        with self.lock:
            result = self.app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


def _reset_moto_dynamodb() -> None:
    """Forget every table in moto's in-process DynamoDB (it is global to the process)."""
    from moto.backends import get_backend

    get_backend("dynamodb").reset()


class EmbeddedDynamo:
    """moto's DynamoDB on ``host``:``port`` (0 = free port), requests serialised.

    moto keeps its data in process-global memory, so the data is dropped on :meth:`start` and
    :meth:`stop`: each embedded instance begins empty. One instance per process at a time.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._host = host
        self._port = port
        self._server: Any = None
        self.lock = threading.Lock()
        """Held while moto handles a request; tests may hold it to freeze the database."""
        self.item_rollback = ItemRollback()
        """Transactions roll back the items they name (:class:`ItemRollback`), while running."""
        self.stream_records = StreamRecords()
        """Stream records as DynamoDB Streams writes them (:class:`StreamRecords`), while
        running."""
        self.indexed_query = IndexedQuery()
        """Query from the queried partition (:class:`IndexedQuery`), installed while running."""
        self.fast_responses = FastResponses()
        """DynamoDB answers written with ``json.dumps`` (:class:`FastResponses`), while running."""
        self.weak_tracking = WeakInstanceTracking()
        """moto's DynamoDB model instances tracked by weak reference
        (:class:`WeakInstanceTracking`), while running."""

    def start(self) -> EmbeddedDynamo:
        """Start serving (blocks until the socket is bound); returns self."""
        from moto.server import ThreadedMotoServer

        lock = self.lock

        class _SerialisedMotoServer(ThreadedMotoServer):
            # ThreadedMotoServer builds its WSGI app inside _server_entry and offers no hook to
            # wrap it, so we rebuild that (short) method around the serialising middleware.
            def _server_entry(self) -> None:
                from moto.moto_server.werkzeug_app import (
                    DomainDispatcherApplication,
                    MotoRequestHandler,
                    create_backend_app,
                )
                from werkzeug.serving import make_server

                class QuietHandler(MotoRequestHandler):
                    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
                        """No access log: a line per call drowns the console and costs ~40%."""

                app = SerialisedApp(DomainDispatcherApplication(create_backend_app), lock)
                self._server = make_server(
                    self._ip_address,
                    self._port,
                    app,
                    threaded=True,
                    request_handler=QuietHandler,
                )
                self._server_ready_event.set()
                self._server.serve_forever()

        _reset_moto_dynamodb()
        self.item_rollback.install()
        self.indexed_query.install()
        self.fast_responses.install()
        self.weak_tracking.install()
        self.stream_records.install()  # last: it wraps IndexedQuery's update_item
        self._server = _SerialisedMotoServer(ip_address=self._host, port=self._port, verbose=False)
        self._server.start()
        log.info("embedded DynamoDB (moto) on %s", self.endpoint)
        return self

    def stop(self) -> None:
        """Stop serving, release the port and drop the data."""
        if self._server is None:
            return
        self._server.stop()
        inner = getattr(self._server, "_server", None)
        if inner is not None:
            inner.server_close()  # ThreadedMotoServer.stop leaves the listening socket open
        self._server = None
        self.stream_records.uninstall()  # first: it wraps IndexedQuery's update_item
        self.item_rollback.uninstall()
        self.indexed_query.uninstall()
        self.fast_responses.uninstall()
        self.weak_tracking.uninstall()
        _reset_moto_dynamodb()

    def __enter__(self) -> EmbeddedDynamo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def endpoint(self) -> str:
        """``http://host:port`` for ``DYNAMODB_ENDPOINT`` / boto3's ``endpoint_url``."""
        assert self._server is not None, "start() first"
        host, port = self._server.get_host_and_port()
        return f"http://{host}:{port}"


def load_schema_module() -> Any | None:
    """``shared.adapters.dynamo.schema`` if it exists, else None (a missing *dependency* raises)."""
    try:
        return importlib.import_module(SCHEMA_MODULE)
    except ModuleNotFoundError as exc:
        parts = SCHEMA_MODULE.split(".")
        absent = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if exc.name in absent:
            return None
        raise


def create_tables(client: Any, table_name: str) -> bool:
    """Create the tables with the schema module CDK uses; False (and a warning) if it is absent.

    An existing table (``ResourceInUseException``) is not an error: ``--dynamodb-endpoint`` may
    point at a database that already has it.
    """
    schema = load_schema_module()
    if schema is None or not hasattr(schema, "create_tables"):
        log.warning("%s.create_tables not found: no tables created", SCHEMA_MODULE)
        return False
    try:
        schema.create_tables(client, table_name)
    except client.exceptions.ResourceInUseException:
        log.info("table %s already exists", table_name)
    return True
