"""Contract tests: client models generated from ``shared/protocol/asyncapi.json`` by Modelina (the
AsyncAPI project's generator, pinned in ``package.json``) come out whole. Node runs
``shared/protocol/client/models.mjs`` into a temporary directory: the TypeScript models (Modelina's
default classes, and the library's interfaces) compile with ``tsc --noEmit --strict``; in every
language each model is named (no ``AnonymousSchema_N``) and the union of server messages holds
every event type; ``shared/protocol/client/protocol.d.ts`` is what the generator writes today.
Needs Node and ``npm ci`` (``.ci/setup --full``); without them the test fails."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shared.protocol.inbound import MODEL_BY_ACTION
from shared.protocol.outbound import EVENT_BY_TYPE

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "shared" / "protocol" / "client" / "models.mjs"
DECLARATIONS = ROOT / "shared" / "protocol" / "client" / "protocol.d.ts"
LIBRARY_TYPES = ROOT / "shared" / "protocol" / "client" / "wordle-client.d.ts"
TSC = ROOT / "node_modules" / ".bin" / "tsc"
LANGUAGES = ("typescript", "typescript-interfaces", "kotlin")
EVENTS = {model.__name__ for model in EVENT_BY_TYPE.values()}
ACTIONS = {model.__name__ for model in MODEL_BY_ACTION.values()}


def _node() -> str:
    node = shutil.which("node")
    assert node is not None, "Node 20 is needed (.ci/setup --full)"
    assert (ROOT / "node_modules" / "@asyncapi" / "modelina").is_dir(), "run npm ci"
    return node


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The models of every language, generated once (a few seconds)."""
    out = tmp_path_factory.mktemp("models")
    subprocess.run([_node(), str(SCRIPT), str(out)], cwd=ROOT, check=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def report(generated: Path) -> dict[str, list[dict[str, Any]]]:
    """Per language: each model's name, kind and (unions) members, as Modelina built them."""
    result: dict[str, list[dict[str, Any]]] = json.loads(
        (generated / "report.json").read_text(encoding="utf-8")
    )
    return result


@pytest.mark.parametrize("language", ["typescript", "typescript-interfaces"])
def test_the_generated_typescript_compiles_strictly(generated: Path, language: str) -> None:
    files = sorted(str(p) for p in (generated / language).glob("*.ts"))
    assert len(files) > len(EVENTS) + len(ACTIONS)
    compiled = subprocess.run(
        [str(TSC), "--noEmit", "--strict", "--target", "es2022", *files],
        cwd=generated / language,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_has_a_named_model(
    report: dict[str, list[dict[str, Any]]], language: str
) -> None:
    models = report[language]
    rendered = {m["name"] for m in models if m["kind"] != "ConstrainedUnionModel"}
    assert rendered >= EVENTS | ACTIONS
    anonymous = [m["name"] for m in models if re.search(r"anonymous", m["name"], re.I)]
    assert anonymous == []
    # Kotlin renders no unions (Modelina writes the field as Any): only its union is unnamed.
    unnamed = [m for m in models if not m["name"]]
    assert all(m["kind"] == "ConstrainedUnionModel" for m in unnamed)
    assert language == "kotlin" or unnamed == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_union_of_server_messages_holds_every_event_type(
    report: dict[str, list[dict[str, Any]]], language: str
) -> None:
    unions = [set(m["members"]) for m in report[language] if m["kind"] == "ConstrainedUnionModel"]
    assert EVENTS in unions


def test_the_typescript_union_is_written_out_whole(generated: Path) -> None:
    text = (generated / "typescript-interfaces" / "Game.ts").read_text(encoding="utf-8")
    declared = re.search(r"^type Game = (.*);$", text, flags=re.M)
    assert declared is not None
    assert set(declared.group(1).split(" | ")) == EVENTS


def test_the_library_declarations_are_up_to_date(tmp_path: Path) -> None:
    fresh = tmp_path / "protocol.d.ts"
    subprocess.run([_node(), str(SCRIPT), "--dts", str(fresh)], cwd=ROOT, check=True, timeout=300)
    assert DECLARATIONS.read_text(encoding="utf-8") == fresh.read_text(encoding="utf-8"), (
        f"regenerate: node {SCRIPT.relative_to(ROOT)} --dts {DECLARATIONS.relative_to(ROOT)}"
    )


USAGE = """
import { WordleClient, ProtocolError, memoryStorage, type ServerEvent } from "LIBRARY";
const client = new WordleClient({ url: "ws://localhost:8080/ws", storage: memoryStorage() });
client.on("event", (event: ServerEvent) => {
  if (event.type === "turn") console.log(event.duel_id, event.deadline_ms);
});
async function guess(duelId: string, word: string, deadlineMs: number): Promise<string> {
  try {
    const reply = await client.request({ action: "guess", duel_id: duelId, word }, { deadlineMs });
    return reply.type;
  } catch (err) {
    return err instanceof ProtocolError ? err.code : "?";
  }
}
void guess;
"""


def test_the_library_declarations_compile_with_a_typed_use(tmp_path: Path) -> None:
    """The library's own declarations over the generated ones: a typed client compiles."""
    usage = tmp_path / "usage.ts"
    usage.write_text(
        USAGE.replace("LIBRARY", LIBRARY_TYPES.with_suffix("").with_suffix(".js").as_posix())
    )
    compiled = subprocess.run(
        [str(TSC), "--noEmit", "--strict", "--module", "nodenext", str(LIBRARY_TYPES), str(usage)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
