"""Artifact tests: what the tests need around the packaged functions.

- ``runtime_python()``: the Lambda runtime's *base* interpreter (the version in ``cdk.json``;
  ``infra.cdk.runtime_version``, which also compiles the packaged bytecode with it);
- ``Packaged.from_assembly``: the staged code and layer asset folders, the handlers, routes and
  environment, read from a synthesized cloud assembly (template + ``*.assets.json``);
- ``Recorder``: a stand-in for API Gateway's ``@connections`` endpoint (``CALLBACK_URL``) that
  records every ``POST /{stage}/@connections/{id}`` body; ``GET /_recorded?since=N`` hands the
  recording to the driver;
- ``MotoServer``: moto's ``ThreadedMotoServer`` on a free local port (DynamoDB, Step Functions).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from infra.cdk.runtime_version import runtime_python
from shared.protocol.framing import unpack

__all__ = ["MotoServer", "Packaged", "Recorder", "runtime_python", "shipped_modules"]

# --------------------------------------------------------------------------- the cloud assembly


def _logical_ids(node: Any) -> Iterator[str]:
    """Every logical id a template fragment points at (``Ref`` / ``Fn::GetAtt``)."""
    if isinstance(node, dict):
        if isinstance(node.get("Ref"), str):
            yield node["Ref"]
        if isinstance(node.get("Fn::GetAtt"), list):
            yield node["Fn::GetAtt"][0]
        for value in node.values():
            yield from _logical_ids(value)
    elif isinstance(node, list):
        for value in node:
            yield from _logical_ids(value)


@dataclass(frozen=True)
class Packaged:
    """The functions as the CDK app packages them."""

    code_dir: Path
    """The staged code asset folder (``Code.from_asset`` with ``CODE_EXCLUDE``)."""
    layer_dir: Path
    """The staged layer asset folder (``python/`` inside)."""
    handlers: dict[str, str]
    """Function logical id -> its ``Handler`` (``functions.messages.guess``)."""
    routes: dict[str, str]
    """WebSocket route key -> the ``Handler`` of the function its integration invokes."""
    environment: dict[str, Any]
    """Environment variable -> its value in the template (a string, or a token such as
    ``{"Ref": ...}``), merged over every function."""

    @classmethod
    def from_assembly(cls, outdir: Path, template: dict[str, Any]) -> Packaged:
        """Read ``template`` (one stack of the assembly in ``outdir``). Raises AssertionError
        when the functions do not share one code asset and one layer, or a variable has two
        different literal values."""
        objects: dict[str, Path] = {}
        for manifest in outdir.glob("*.assets.json"):
            for entry in json.loads(manifest.read_text(encoding="utf-8"))["files"].values():
                for destination in entry["destinations"].values():
                    objects[destination["objectKey"]] = outdir / entry["source"]["path"]
        resources: dict[str, Any] = template["Resources"]
        functions = {
            k: v["Properties"] for k, v in resources.items() if v["Type"] == "AWS::Lambda::Function"
        }
        code_keys = {p["Code"]["S3Key"] for p in functions.values()}
        assert len(code_keys) == 1, f"functions do not share one code asset: {code_keys}"
        layer_ids = {tuple(_logical_ids(p.get("Layers", []))) for p in functions.values()}
        assert len(layer_ids) == 1, f"functions do not share one layer: {layer_ids}"
        ((layer_id,),) = layer_ids
        layer_key = resources[layer_id]["Properties"]["Content"]["S3Key"]
        environment: dict[str, Any] = {}
        for props in functions.values():
            for name, value in props.get("Environment", {}).get("Variables", {}).items():
                assert environment.setdefault(name, value) == value, (name, value)
        # routes invoke each function's live alias: an alias stands for its function
        aliases = {
            k: next(_logical_ids(v["Properties"]["FunctionName"]))
            for k, v in resources.items()
            if v["Type"] == "AWS::Lambda::Alias"
        }
        routes: dict[str, str] = {}
        for res in resources.values():
            if res["Type"] != "AWS::ApiGatewayV2::Route":
                continue
            props = res["Properties"]
            for integration in _logical_ids(props.get("Target")):
                uri = resources.get(integration, {}).get("Properties", {}).get("IntegrationUri")
                targets = [aliases.get(i, i) for i in _logical_ids(uri)]
                targets = [i for i in targets if i in functions]
                if targets:
                    routes[props["RouteKey"]] = functions[targets[0]]["Handler"]
        return cls(
            code_dir=objects[next(iter(code_keys))],
            layer_dir=objects[layer_key],
            handlers={k: p["Handler"] for k, p in functions.items()},
            routes=routes,
            environment=environment,
        )


def shipped_modules(code_dir: Path) -> list[Path]:
    """Every ``.py`` file in a code asset folder, sorted."""
    return sorted(code_dir.rglob("*.py"))


# --------------------------------------------------------------------------- @connections


class Recorder:
    """API Gateway's ``@connections`` endpoint, recording: ``url`` is the ``CALLBACK_URL``
    (with a stage, as API Gateway's is). ``posts`` holds ``(connection_id, body)`` in arrival
    order; ``deleted`` the closed connection ids. Every POST answers 200 (no connection is
    gone)."""

    STAGE = "artifact"

    def __init__(self) -> None:
        self.posts: list[tuple[str, str]] = []
        self.deleted: list[str] = []
        self.lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _connection_id(self) -> str | None:
                path = unquote(urlsplit(self.path).path)
                match = re.fullmatch(r"/[^/]+/@connections/([^/]+)", path)
                return match.group(1) if match else None

            def _answer(self, status: int, body: bytes = b"") -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                connection_id = self._connection_id()
                if connection_id is None:
                    self._answer(404)
                    return
                with recorder.lock:
                    recorder.posts.append((connection_id, data.decode("utf-8")))
                self._answer(200)

            def do_DELETE(self) -> None:
                connection_id = self._connection_id()
                if connection_id is None:
                    self._answer(404)
                    return
                with recorder.lock:
                    recorder.deleted.append(connection_id)
                self._answer(204)

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                if url.path != "/_recorded":
                    self._answer(404)
                    return
                since = int(parse_qs(url.query).get("since", ["0"])[0])
                with recorder.lock:
                    body = json.dumps(recorder.posts[since:]).encode()
                self._answer(200, body)

            def log_message(self, format: str, *args: Any) -> None:
                """No access log."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/{self.STAGE}"

    @property
    def recorded_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/_recorded"

    def received(self) -> dict[str, list[dict[str, Any]]]:
        """Connection id -> the messages it was sent (parsed JSON), in order."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self.lock:
            for connection_id, body in self.posts:
                out.setdefault(connection_id, []).extend(unpack(body))
        return out

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class MotoServer:
    """moto's server (every service it mocks) on a free local port; ``endpoint`` is
    ``http://127.0.0.1:PORT`` for ``AWS_ENDPOINT_URL``. moto keeps its data in this process."""

    def __init__(self) -> None:
        from moto.server import ThreadedMotoServer

        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)

    @property
    def endpoint(self) -> str:
        host, port = self._server.get_host_and_port()
        return f"http://{host}:{port}"

    def __enter__(self) -> MotoServer:
        self._quiet = logging.getLogger("werkzeug")
        self._level = self._quiet.level
        self._quiet.setLevel(logging.WARNING)  # no access log line per request
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._quiet.setLevel(self._level)
        self._server.stop()
        inner = getattr(self._server, "_server", None)
        if inner is not None:
            inner.server_close()  # ThreadedMotoServer.stop leaves the listening socket open
