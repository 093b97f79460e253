"""Local runtime: DynamoDB on one machine — moto's server, embedded and serialised.

moto answers each request atomically only if no other request runs at the same time: two
concurrent conditional writes can both pass their condition, an outcome AWS never produces.
:class:`EmbeddedDynamo` therefore runs moto's ``ThreadedMotoServer`` behind a WSGI middleware that
handles one request at a time (the whole request, body included). Handlers reach it through
``DYNAMODB_ENDPOINT``. Tables come from ``shared.adapters.dynamo.schema.create_tables`` — the
module CDK uses — when it exists (:func:`create_tables`).
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

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


class ItemRollback:
    """moto's ``TransactWriteItems`` with the rollback of the items it touches, not the tables.

    moto backs up every table a transaction names with ``copy.deepcopy`` before applying it
    (``DynamoDBBackend.transact_write_items``), so each transaction costs time in proportion to
    the whole table: with a hundred tournaments' players, connections and lobbies in the one
    table of the single-table design, a join's transaction took tens of ms. Installed
    (:meth:`install`), the backend's transaction backs up only the items its operations name
    (by key, their attributes as they were or their absence) and, when moto raises (a failed
    condition: ``TransactionCanceledException``; a validation error), puts those back —
    the same outcome, since moto applies a transaction's operations only to those items. The
    table copy is skipped by handing moto the live table as its "backup" for the duration of the
    call (its restore is then a no-op). Requests must be serialised (they are: the
    :class:`SerialisedApp` / in-process lock), as moto itself requires.
    """

    def __init__(self) -> None:
        self._installed: Any = None
        self._active = False

    def install(self) -> None:
        """Patch moto's backend class and the ``copy`` module its models module uses."""
        import copy

        from moto.dynamodb.models.table import Table

        models: Any = importlib.import_module("moto.dynamodb.models")
        if self._installed is not None:
            return
        original = models.DynamoDBBackend.transact_write_items
        rollback = self

        class _Copy:
            """``copy`` for moto's models module: a table's deepcopy is the table itself while
            an item-rolled-back transaction runs (and a real deepcopy otherwise)."""

            def __getattr__(self, name: str) -> Any:
                return getattr(copy, name)

            @staticmethod
            def deepcopy(x: Any, memo: Any = None) -> Any:
                if rollback._active and isinstance(x, Table):
                    return x
                return copy.deepcopy(x, memo)

        def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> None:
            saved = rollback._save(backend, transact_items)
            rollback._active = True
            try:
                original(backend, transact_items)
            except Exception:
                rollback._active = False
                rollback._restore(backend, saved)
                raise
            finally:
                rollback._active = False

        self._installed = (models, original, models.copy)
        models.copy = _Copy()
        models.DynamoDBBackend.transact_write_items = transact_write_items

    def uninstall(self) -> None:
        """Undo :meth:`install`."""
        if self._installed is None:
            return
        models, original, copy_module = self._installed
        models.DynamoDBBackend.transact_write_items = original
        models.copy = copy_module
        self._installed = None

    @staticmethod
    def _save(
        backend: Any, transact_items: list[dict[str, Any]]
    ) -> list[tuple[str, dict[str, Any], dict[str, Any] | None]]:
        """(table, key, attributes before or None) for each item a write operation names."""
        import copy

        saved = []
        for entry in transact_items:
            for op_type, op in entry.items():
                if op_type == "ConditionCheck" or op.get("TableName") not in backend.tables:
                    continue
                table = backend.tables[op["TableName"]]
                if op_type == "Put":
                    attrs = op.get("Item") or {}
                    names = [table.hash_key_attr, table.range_key_attr]
                    key = {n: attrs[n] for n in names if n is not None and n in attrs}
                else:
                    key = op.get("Key") or {}
                try:
                    item = backend.get_item(op["TableName"], key)
                except Exception:  # a malformed key: moto refuses the transaction itself
                    continue
                before = copy.deepcopy(item.to_json()["Attributes"]) if item else None
                saved.append((op["TableName"], key, before))
        return saved

    @staticmethod
    def _restore(
        backend: Any, saved: list[tuple[str, dict[str, Any], dict[str, Any] | None]]
    ) -> None:
        for table_name, key, before in reversed(saved):
            if before is None:
                if backend.get_item(table_name, key) is not None:
                    backend.delete_item(table_name, key)
            else:
                backend.put_item(table_name, before)


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
        self._rollback = ItemRollback()

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
        self._rollback.install()
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
        self._rollback.uninstall()
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
