"""Artifact tests: the functions run from exactly what CDK deploys (the README: "CI ... imports
every function from the same code asset and locked dependency layer that CDK deploys").

- Every module the code asset can ship compiles on the Lambda runtime's Python (a docstring
  with a lone surrogate compiled on 3.11 but not on 3.13).
- Every module of the staged code asset and layer has an up-to-date ``unchecked-hash`` cache
  file for the runtime's Python (``infra.cdk.bytecode``, PEP 552), and the tournament below compiles
  none of them from source: a cold start loads bytecode.
- The CDK app is synthesized with the layer built from ``infra/requirements.lock`` for this
  machine's CPU (a stand-in for arm64); the staged code and layer asset folders are taken from
  the cloud assembly. ``driver.py`` runs on the runtime's *base* interpreter with ``-I -S`` and
  only those two folders added to ``sys.path``, imports every function's ``Handler`` named by
  the template — a module, word list or package-data file the assets forget fails here — and
  plays a full 8-player tournament through the handlers the template's routes invoke, against
  moto (DynamoDB, Step Functions) served from this process, with API Gateway's ``@connections``
  recorded by a local HTTP server (``CALLBACK_URL``).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from functions.routes import TIMERS
from infra.cdk.constructs.functions import CODE_PACKAGES
from infra.cdk.lock import locked_versions, normalize
from infra.cdk.runtime_version import LAMBDA_PYTHON_VERSION
from tests.artifact.support import MotoServer, Recorder, shipped_modules

pytestmark = pytest.mark.artifact

REPO_ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("driver.py")
REGION = "us-east-1"
PLAYERS = 8
INTRO_SECONDS = "0.2"
"""The round intro, shortened: the driver waits for each one in real time."""
TURN_SECONDS = "600"
"""Longer than the test: no turn times out, every duel is decided by a guess."""

_COMPILE = """
import json, sys
failures = []
for path in sys.argv[1:]:
    try:
        with open(path, "rb") as f:
            compile(f.read(), path, "exec", dont_inherit=True)
    except Exception as err:
        failures.append([path, type(err).__name__, str(err)])
print(json.dumps(failures))
"""


def compile_failures(python: Path, files: list[Path]) -> list[list[str]]:
    """``[path, error type, message]`` for each file ``python`` (run ``-I -S``) cannot compile."""
    return _json_of(python, _COMPILE, files, timeout=120)


def _json_of(python: Path, script: str, args: list[Path], *, timeout: float) -> list[list[str]]:
    """What ``script`` prints as JSON, run by ``python -I -S`` with ``args``."""
    out = subprocess.run(
        [str(python), "-I", "-S", "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    failures: list[list[str]] = json.loads(out.stdout)
    return failures


def test_every_shipped_module_compiles_on_the_runtime_python(runtime_interpreter, record_property):
    files = [
        path
        for package in CODE_PACKAGES
        for path in shipped_modules(REPO_ROOT / package)
        if "__pycache__" not in path.parts
    ]
    assert len(files) > 50
    assert compile_failures(runtime_interpreter, files) == []
    record_property(
        "artifact", f"compile: {len(files)} modules of {CODE_PACKAGES} OK on {runtime_interpreter}"
    )


def test_the_compile_check_fails_on_a_lone_surrogate_docstring(runtime_interpreter, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""A lone surrogate: \\ud800."""\n', encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text('"""Fine."""\n', encoding="utf-8")
    failures = compile_failures(runtime_interpreter, [good, bad])
    assert [(Path(path).name, kind) for path, kind, _ in failures] == [
        ("bad.py", "UnicodeEncodeError")
    ]


_CACHE_CHECK = """
import importlib.util, json, pathlib, sys
failures = []
for root in sys.argv[1:]:
    for source in sorted(pathlib.Path(root).rglob("*.py")):
        pyc = pathlib.Path(importlib.util.cache_from_source(str(source)))
        if not pyc.is_file():
            failures.append([str(source), "no cache file"])
            continue
        data = pyc.read_bytes()
        flags = int.from_bytes(data[4:8], "little")
        if data[:4] != importlib.util.MAGIC_NUMBER:
            failures.append([str(source), "another Python's magic number"])
        elif flags != 0b01:
            failures.append([str(source), f"flags {flags:#04b}, not unchecked-hash"])
        elif data[8:16] != importlib.util.source_hash(source.read_bytes()):
            failures.append([str(source), "stale: compiled from other source bytes"])
print(json.dumps(failures))
"""


def stale_cache_files(python: Path, roots: list[Path]) -> list[list[str]]:
    """``[source, reason]`` for each ``.py`` under ``roots`` that ``python`` (run ``-I -S``)
    would compile on import: no cache file for its version, or one that is not an
    ``unchecked-hash`` file (PEP 552: flags 0b01) of these very source bytes."""
    return _json_of(python, _CACHE_CHECK, roots, timeout=300)


def test_the_assets_ship_up_to_date_unchecked_hash_bytecode(
    runtime_interpreter, built, record_property
):
    code, layer = built.packaged.code_dir, built.packaged.layer_dir / "python"
    assert stale_cache_files(runtime_interpreter, [code, layer]) == []
    counts = {
        name: len(list(root.rglob("*.py"))) for name, root in [("code", code), ("layer", layer)]
    }
    record_property("artifact", f"bytecode: unchecked-hash and up to date for {counts} modules")


def test_the_bytecode_check_finds_missing_stale_and_timestamp_files(runtime_interpreter, tmp_path):
    from infra.cdk.bytecode import CODE_PREFIX, compile_tree

    for name in ("fresh", "stale", "timestamp"):
        (tmp_path / f"{name}.py").write_text(f"NAME = {name!r}\n")
    compile_tree(tmp_path, CODE_PREFIX, runtime_interpreter)
    (tmp_path / "stale.py").write_text("NAME = 'edited after compiling'\n")
    subprocess.run(
        [str(runtime_interpreter), "-I", "-S", "-m", "py_compile", str(tmp_path / "timestamp.py")],
        check=True,
    )
    (tmp_path / "new.py").write_text("")
    failures = stale_cache_files(runtime_interpreter, [tmp_path])
    assert [(Path(path).name, reason.split()[0]) for path, reason in failures] == [
        ("new.py", "no"),
        ("stale.py", "stale:"),
        ("timestamp.py", "flags"),
    ]


def _local_environment(
    template_env: dict[str, Any], local: dict[str, str], tmp_path: Path
) -> dict[str, str]:
    """The functions' environment: the template's literal values, local stand-ins for its
    tokens (table name, callback URL, state machine ARN), short clocks, moto and dummy
    credentials; nothing from this process's environment."""
    tokens = {k for k, v in template_env.items() if not isinstance(v, str)}
    assert tokens <= set(local), f"template variables with no local value: {tokens - set(local)}"
    env = {k: v for k, v in template_env.items() if isinstance(v, str)}
    return {
        **env,
        **local,
        "TURN_SECONDS": TURN_SECONDS,
        "INTRO_SECONDS": INTRO_SECONDS,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "TZ": "UTC",
        "LANG": "C.UTF-8",
    }


def _logged_errors(stdout: str) -> list[str]:
    """The ERROR records (Powertools JSON lines) the functions printed, with their exception."""
    found = []
    for line in stdout.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("level") == "ERROR":
            found.append(f"{record.get('message')}: {record.get('exception', '')[-3000:]}")
    return found


def _boto3_client(service: str, endpoint: str) -> Any:
    import boto3

    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_a_tournament_through_the_packaged_functions(
    runtime_interpreter, built, tmp_path, record_property
):
    from shared.adapters.dynamo.schema import create_tables

    packaged = built.packaged
    clock = TIMERS["clock"].replace(":", ".")
    assert clock in packaged.handlers.values(), "no function runs the clock handler"
    for route in ("$connect", "$default", "session", "join", "guess"):
        assert route in packaged.routes, f"the template routes {route!r} to no function"
    table = f"artifact-{os.getpid()}-{time.time_ns()}"

    with MotoServer() as moto, Recorder() as recorder:
        create_tables(_boto3_client("dynamodb", moto.endpoint), table)
        sfn = _boto3_client("stepfunctions", moto.endpoint)
        # moto records executions and runs none (the driver plays the loop): a stand-in
        # definition is enough; the real one is tested in tests/functional.
        machine = sfn.create_state_machine(
            name=table,
            definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
            roleArn="arn:aws:iam::123456789012:role/artifact",
            type="EXPRESS",
        )["stateMachineArn"]
        env = _local_environment(
            packaged.environment,
            {"TABLE_NAME": table, "CALLBACK_URL": recorder.url, "STATE_MACHINE_ARN": machine},
            tmp_path,
        )
        env["AWS_ENDPOINT_URL"] = moto.endpoint
        config = {
            "code": str(packaged.code_dir),
            "layer": str(packaged.layer_dir),
            "handlers": sorted(set(packaged.handlers.values())),
            "routes": packaged.routes,
            "clock": clock,
            "recorded": recorder.recorded_url,
            "table": table,
            "players": PLAYERS,
            "language": "en",
            "timeout_s": 90,
        }
        (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
        result_file = tmp_path / "result.json"
        started = time.monotonic()
        proc = subprocess.run(
            [
                str(runtime_interpreter),
                "-I",
                "-S",
                str(DRIVER),
                str(tmp_path / "config.json"),
                str(result_file),
            ],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        run_s = time.monotonic() - started
        received = recorder.received()
        executions = len(sfn.list_executions(stateMachineArn=machine)["executions"])

    assert proc.returncode == 0, (
        f"driver failed:\n{proc.stderr[-6000:]}\nerrors the functions logged:\n"
        + "\n".join(_logged_errors(proc.stdout)[-3:])
    )
    result = json.loads(result_file.read_text(encoding="utf-8"))

    # Isolation: the runtime's Python, only the two assets beyond the standard library.
    assert result["python"].rsplit(".", 1)[0] == LAMBDA_PYTHON_VERSION
    assert result["sys_path"][:2] == [str(packaged.code_dir), str(packaged.layer_dir / "python")]
    assert result["imported"] == config["handlers"]
    assert result["module_origins"]["code"] > 0
    assert result["module_origins"]["layer"] > 0
    # The layer ships exactly the lock (boto3 included), and the functions import from it.
    shipped = {normalize(name): version for name, version in result["layer_distributions"].items()}
    assert shipped == locked_versions()
    assert result["boto3_file"].startswith(str(packaged.layer_dir / "python") + os.sep)
    # Every module of ours and of the layer came from its shipped bytecode: none compiled.
    assert result["compiled_from_source"]["code"] == []
    assert result["compiled_from_source"]["layer"] == []

    # Every player received tournament_end, once, and they agree on the places.
    players = result["players"]
    assert len(players) == PLAYERS
    ends = {cid: [m for m in received[cid] if m["type"] == "tournament_end"] for cid in players}
    assert all(len(found) == 1 for found in ends.values()), {c: len(e) for c, e in ends.items()}
    finals = [found[0] for found in ends.values()]
    assert all(
        (f["tournament_id"], f["places"], f["winners"])
        == (finals[0]["tournament_id"], finals[0]["places"], finals[0]["winners"])
        for f in finals
    )
    places = {p["player_id"]: p["place"] for p in finals[0]["places"]}
    assert set(places) == {p["player_id"] for p in players.values()}
    assert sorted(places.values()) == [p["place"] for p in finals[0]["places"]]
    assert min(places.values()) == 1
    assert set(finals[0]["winners"]) == {pid for pid, place in places.items() if place == 1}
    for cid, player in players.items():  # each rating message tells that player's place
        ratings = [m for m in received[cid] if m["type"] == "rating"]
        assert ratings, f"{cid} got no rating"
        assert ratings[-1]["place"] == places[player["player_id"]]
    internal = [m for msgs in received.values() for m in msgs if m.get("code") == "internal_error"]
    assert internal == []
    assert result["invalid_guess_error"] not in (None, "internal_error")

    counts = result["counts"]
    summary = (
        f"tournament via the packaged functions: Python {result['python']} -I -S, "
        f"{len(result['imported'])} handlers imported in {result['import_s']:.2f} s "
        f"(modules: {result['module_origins']}); layer {len(shipped)} dists, boto3 "
        f"{shipped['boto3']} from the layer; {result['rounds']} rounds, {result['duels']} duels, "
        f"{counts['guesses']} guesses, {counts['clock_wakes']} clock wakes "
        f"({counts['clock_applied']} applied), {counts['invocations']} invocations, "
        f"{executions} executions started; winners {finals[0]['winners']}; played in "
        f"{result['play_s']:.1f} s, driver {run_s:.1f} s, layer {built.layer_s:.1f} s, "
        f"synth {built.synth_s:.1f} s"
    )
    print(summary)
    record_property("artifact", summary)
