"""Infrastructure: the functions — one per handler module of ``ROUTES``/``TIMERS``, Python on
arm64 with the dependency layer, memory/timeout per function, an environment built from the
``Settings`` field names, Powertools settings, and a log group with retention."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from functions.routes import ROUTES, TIMERS
from functions.streams import STREAMS
from infra.cdk.bytecode import UNCHECKED_HASH_FLAGS, cache_file_flags
from infra.cdk.constructs.functions import SPECS, handler_modules
from infra.cdk.layer import PYTHON_VERSION
from infra.cdk.runtime_version import RUNTIME_ENVIRONMENT
from shared.runtime.settings import Settings
from tests.tools.cdk.cfn import functions_by_handler, render, resources

POWERTOOLS = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE", "POWERTOOLS_LOG_LEVEL"}
SETTING_NAMES = {name.upper() for name in Settings.names()}


def test_one_function_per_handler_module(dev):
    handlers = set(functions_by_handler(dev))
    streams = [s.target for s in STREAMS.values()]
    targets = {t.replace(":", ".") for t in [*ROUTES.values(), *TIMERS.values(), *streams]}
    assert handlers == targets
    assert set(handler_modules()) == set(SPECS)


def test_python_on_arm64_with_the_layer(dev):
    (layer_id,) = resources(dev, "AWS::Lambda::LayerVersion")
    for handler, (_, fn) in functions_by_handler(dev).items():
        assert fn["Runtime"] == f"python{PYTHON_VERSION}", handler
        assert fn["Architectures"] == ["arm64"], handler
        assert fn["Layers"] == [{"Ref": layer_id}], handler
        assert fn["TracingConfig"] == {"Mode": "Active"}, handler


def test_memory_and_timeout_are_chosen_per_function(dev):
    by_handler = functions_by_handler(dev)
    for spec in SPECS.values():
        _, fn = by_handler[spec.handler]
        assert fn["MemorySize"] == spec.memory_mb
        assert fn["Timeout"] == spec.timeout_s
        # API Gateway gives up on a WebSocket integration after 29 s (timers and stream
        # readers are not behind it).
        behind_the_api = {t.split(":")[0].split(".")[1] for t in TIMERS.values()} | set(STREAMS)
        if spec.module not in behind_the_api:
            assert spec.timeout_s <= 29
    assert len({(s.memory_mb, s.timeout_s) for s in SPECS.values()}) > 1


def test_environment_covers_each_functions_settings(dev):
    by_handler = functions_by_handler(dev)
    for spec in SPECS.values():
        _, fn = by_handler[spec.handler]
        env = fn["Environment"]["Variables"]
        needed = {name.upper() for name in spec.needed_settings()}
        assert needed <= set(env), (spec.module, needed - set(env))
        assert set(env) <= SETTING_NAMES | POWERTOOLS | set(RUNTIME_ENVIRONMENT), spec.module
        assert set(env) >= POWERTOOLS, spec.module
        # no entry-point scan for pydantic plugins on a cold start
        assert {k: env[k] for k in RUNTIME_ENVIRONMENT} == {"PYDANTIC_DISABLE_PLUGINS": "__all__"}
        assert "TABLE_NAME" in env


def test_pushers_and_schedulers_get_the_urls_and_the_clock(dev):
    by_handler = functions_by_handler(dev)
    for module in (
        "guess",
        "join",
        "party",
        "session",
        "apply_deadlines",
        "watchdog",
        "disconnect",
    ):
        _, fn = by_handler[SPECS[module].handler]
        env = fn["Environment"]["Variables"]
        for name in ("CALLBACK_URL", "TURN_SECONDS", "INTRO_SECONDS"):
            assert name in env, (module, name)
        # the clock function learns the machine from the execution context (no cycle)
        assert ("STATE_MACHINE_ARN" in env) is (module != "apply_deadlines"), module
        assert "RECONNECT_SECONDS" in env
    _, watchdog = by_handler["functions.watchdog.handler"]
    assert "WATCHDOG_GRACE_SECONDS" in watchdog["Environment"]["Variables"]


def test_environment_values_point_at_this_stacks_resources(dev):
    (table_id,) = resources(dev, "AWS::DynamoDB::Table")
    (api_id,) = resources(dev, "AWS::ApiGatewayV2::Api")
    _, fn = functions_by_handler(dev)["functions.messages.guess"]
    env = fn["Environment"]["Variables"]
    assert env["TABLE_NAME"] == {"Ref": table_id}
    assert render(env["CALLBACK_URL"]).startswith(f"https://<{api_id}>.execute-api.")
    assert render(env["CALLBACK_URL"]).endswith("/dev")
    # executions start through the machine's live alias, so the definition rolls back too
    (alias_id,) = resources(dev, "AWS::StepFunctions::StateMachineAlias")
    assert env["STATE_MACHINE_ARN"] == {"Fn::GetAtt": [alias_id, "Arn"]}
    assert float(env["TURN_SECONDS"]) == Settings().turn_seconds
    assert env["POWERTOOLS_LOG_LEVEL"] == "INFO"


def test_each_function_logs_to_its_own_group_with_retention(dev, prod):
    groups = resources(dev, "AWS::Logs::LogGroup")
    seen = set()
    for _, fn in functions_by_handler(dev).values():
        group_id = fn["LoggingConfig"]["LogGroup"]["Ref"]
        assert groups[group_id]["RetentionInDays"] > 0
        seen.add(group_id)
    assert len(seen) == len(SPECS)
    for logical_id in resources(prod, "AWS::Logs::LogGroup"):
        assert prod["Resources"][logical_id]["DeletionPolicy"] == "RetainExceptOnCreate"


def test_code_asset_holds_only_the_handler_packages(synthesized, dev):
    _, fn = functions_by_handler(dev)["functions.messages.guess"]
    asset_hash = fn["Code"]["S3Key"]
    folders = [
        p
        for p in Path(synthesized.outdir).glob("asset.*")
        if p.is_dir() and asset_hash.startswith(p.name.removeprefix("asset."))
    ]
    assert len(folders) == 1
    code = folders[0]
    assert sorted(p.name for p in code.iterdir()) == ["functions", "shared", "wordlists"]
    names = {p.name for p in code.rglob("*")}
    assert not names & {"tests", ".venv", "node_modules", "cdk.out"}
    assert not (code / "shared" / "protocol" / "client").exists()  # the JavaScript client library
    assert (code / "functions" / "messages.py").is_file()
    assert (code / "shared" / "runtime" / "settings.py").is_file()


def test_code_asset_ships_one_unchecked_hash_cache_file_per_module(synthesized, dev):
    _, fn = functions_by_handler(dev)["functions.messages.guess"]
    asset_hash = fn["Code"]["S3Key"]
    (code,) = [
        p
        for p in Path(synthesized.outdir).glob("asset.*")
        if p.is_dir() and asset_hash.startswith(p.name.removeprefix("asset."))
    ]
    tag = f"cpython-{PYTHON_VERSION.replace('.', '')}"
    sources = sorted(code.rglob("*.py"))
    expected = {src.parent / "__pycache__" / f"{src.stem}.{tag}.pyc" for src in sources}
    # exactly the runtime's cache file of each shipped module: none from a checkout
    assert set(code.rglob("*.pyc")) == expected
    for pyc in expected:
        assert cache_file_flags(pyc.read_bytes()) == UNCHECKED_HASH_FLAGS, pyc


def _plugin_scan_after_settings(extra_env: dict[str, str]) -> str:
    """In a fresh interpreter: build an inbound validator as the messages function's first
    message does (the only function that imports pydantic), then report whether pydantic read
    the installed distributions' entry points looking for plugins."""
    code = (
        "import shared.protocol.inbound as m, pydantic.plugin._loader as loader; "
        'm.parse_inbound(\'{"action":"ping"}\'); '
        "print('scanned' if loader._plugins is not None else 'skipped')"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, **extra_env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout.strip()


def test_the_runtime_environment_skips_pydantic_s_plugin_scan() -> None:
    assert _plugin_scan_after_settings({}) == "scanned"
    assert _plugin_scan_after_settings(RUNTIME_ENVIRONMENT) == "skipped"
