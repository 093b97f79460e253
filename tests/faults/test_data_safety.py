"""Data safety: every table write in the code base is conditional, or says
why not in a ``# unconditional: <reason>`` comment that this test reads; and the synthesized
CloudFormation template keeps point-in-time recovery, TTL and (prod) deletion protection.

Three layers, because each alone can be fooled:

1. a source scan (AST) of ``shared/`` and ``functions/``: every write call (``put_item``,
   ``update_item``, ``delete_item``, ``transact_write_items``, ``batch_write_item``, and the
   table resource's ``put_item``...) and every transaction item literal (``{"Put": ...}``,
   ``{"Update": ...}``, ``{"Delete": ...}``) either names a ``ConditionExpression`` right there,
   or sits under a ``# conditional: <why>`` / ``# unconditional: <reason>`` comment;
2. every kind of write the store can build, built and checked (the ``# conditional:`` claims);
3. a whole tournament with parties, leaves, a disconnect and a resume on moto with every
   DynamoDB write request recorded: each one carries a condition, except the documented
   unconditional ones (matched by operation and key prefix).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from shared.domain.matchmaking import Lobby
from shared.domain.party import Party
from shared.services.model import (
    Connection,
    InviteCreated,
    InviteDeleted,
    LobbyOpener,
    LobbyRecord,
    OpenerUnchanged,
    PartyDeleted,
    PartyRecord,
    Player,
    RatingApplied,
    TokenIssued,
)

ROOT = Path(__file__).resolve().parents[2]
WRITE_CALLS = {
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "batch_write_item",
    "execute_statement",  # PartiQL: no condition syntax we use; must be justified
    "batch_execute_statement",
    "execute_transaction",
}
OP_KEYS = {"Put", "Update", "Delete"}
JUSTIFIED = re.compile(r"#\s*(unconditional|conditional):\s*\S")

UNCONDITIONAL = {
    # (operation, key prefix): the documented reason sits next to the code
    ("Delete", "INVITE#"): "rides in one transaction with the party's versioned save",
}


def _sources() -> list[Path]:
    return sorted(
        p
        for base in ("shared", "functions")
        for p in (ROOT / base).rglob("*.py")
        if ".venv" not in p.parts
    )


def _justified(lines: list[str], node: ast.AST) -> bool:
    """A ``# conditional:`` / ``# unconditional:`` comment on the node's lines or in the
    comment block right above it."""
    start, end = node.lineno - 1, (node.end_lineno or node.lineno)
    if any(JUSTIFIED.search(line) for line in lines[start:end]):
        return True
    k = start - 1
    while k >= 0 and lines[k].strip().startswith("#"):
        if JUSTIFIED.search(lines[k]):
            return True
        k -= 1
    return False


def _has_condition(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        return any(kw.arg == "ConditionExpression" for kw in node.keywords)
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "ConditionExpression":
                return True
            if isinstance(value, ast.Dict) and _has_condition(value):
                return True
    return False


def _write_sites() -> list[tuple[Path, ast.AST, list[str]]]:
    sites = []
    for path in _sources():
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in WRITE_CALLS
            ) or (
                isinstance(node, ast.Dict)
                and any(isinstance(k, ast.Constant) and k.value in OP_KEYS for k in node.keys)
            ):
                sites.append((path, node, lines))
    return sites


def test_the_scan_finds_the_write_sites():
    found = {(p.name, type(n).__name__) for p, n, _ in _write_sites()}
    assert ("store.py", "Call") in found  # put_item, transact_write_items, delete_item
    assert ("store.py", "Dict") in found  # transaction items


def test_every_write_site_is_conditional_or_says_why_not():
    bad = []
    for path, node, lines in _write_sites():
        if _has_condition(node) or _justified(lines, node):
            continue
        # a dict literal whose "Put" value is a name built elsewhere (``put``) is checked
        # where that name's dict is built (it is itself a site)
        if isinstance(node, ast.Dict) and all(
            isinstance(v, ast.Name)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and k.value in OP_KEYS
        ):
            continue
        bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:90]}")
    assert not bad, "writes without a condition or a '# unconditional: <reason>':\n" + "\n".join(
        bad
    )


def _ops(store, write):
    return store._ops(write, 1_800_000_000_000)


@pytest.mark.parametrize("version", [0, 3])
def test_every_write_the_store_builds_carries_a_condition(version):
    from shared.adapters.dynamo.store import DynamoStore
    from shared.adapters.writes import TokenCreated

    store = DynamoStore(object(), "t", lambda: 0)
    player = Player("p", "Nick Name", 1000, 0, version=version)
    writes = [
        player,
        Connection("c", 0, "p", version=version),
        LobbyRecord(Lobby("l", "en", created_ms=0), version=version),
        LobbyOpener("en", 5, "l", version=version),
        OpenerUnchanged("en", 5, 0, version),
        PartyRecord(Party("pa", "A" * 43, ("p",)), version=version),
        RatingApplied("p", "t", 1, 25, 1000, update_player=True),
        RatingApplied("p", "t", 1, 25, 1000, update_player=False),
        InviteCreated("A" * 43, "pa"),
        TokenCreated("h", "p"),
        TokenCreated("h", "p", 0),  # with its TTL
        TokenIssued("h2", "p", 1, 0),
        InviteDeleted("A" * 43),
        PartyDeleted("pa", max(version, 1)),
    ]
    for w in writes:
        for op in _ops(store, w):
            ((kind, body),) = op.items()
            key = json.dumps(body.get("Item", body.get("Key")))
            if (kind, re.search(r'"pk": \{"S": "([A-Z]+#)', key).group(1)) in UNCONDITIONAL:
                continue
            assert body.get("ConditionExpression"), (type(w).__name__, kind)


def test_a_whole_game_sends_only_conditional_writes(backend):
    """Every write request of a tournament with parties, leaves, a disconnect and a resume,
    recorded at the botocore layer (the adapter's real requests)."""
    from tests.faults.support import record, started

    recorded: list[tuple[str, dict]] = []

    def before_call(params, model, **_):
        name = model.name
        if name in ("PutItem", "UpdateItem", "DeleteItem"):
            recorded.append((name, params))
        elif name == "TransactWriteItems":
            for item in params["TransactItems"]:
                ((kind, body),) = item.items()
                recorded.append((kind, body))

    backend.client.meta.events.register("before-parameter-build.dynamodb", before_call)
    leader, member = backend.player("leader"), backend.player("member")
    leader.send("party_create")
    member.send("party_join", invite=leader.last("party")["invite"])
    member.send("party_leave")
    leader.send("party_leave")
    players, mover, opponent, tid = started(backend)
    mover.guess()
    opponent.disconnect()
    opponent.resume()
    players[-1].send("leave")
    for _ in range(200):  # play it out on deadlines
        if record(backend, tid).tournament.over:
            break
        backend.clock.advance_to(backend.clock.next_due())
    assert record(backend, tid).tournament.over
    kinds = {k for k, _ in recorded}
    assert {"Put", "Delete", "PutItem"} <= kinds
    bad = []
    for kind, body in recorded:
        key = body.get("Key") or body.get("Item")
        prefix = re.match(r"([A-Z]+#)", key["pk"]["S"]).group(1)
        if body.get("ConditionExpression") or (kind, prefix) in UNCONDITIONAL:
            continue
        bad.append((kind, key["pk"]["S"]))
    assert not bad, bad


# ------------------------------------------------------------------ the deployed table
def _synth():
    """Synthesize the CDK app offline, like ``tests/tools/cdk/conftest.py`` (stub layer)."""
    import os
    import tempfile

    pytest.importorskip("aws_cdk")
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    from aws_cdk import App

    from infra.cdk.app import add_stage
    from infra.cdk.stack import STAGES

    tmp = Path(tempfile.mkdtemp())
    (tmp / "layer" / "python").mkdir(parents=True)
    app = App(outdir=str(tmp / "out"), analytics_reporting=False)
    stacks = {stage: add_stage(app, stage, layer_dir=tmp / "layer") for stage in STAGES}
    assembly = app.synth()
    return {s: assembly.get_stack_by_name(st.stack_name).template for s, st in stacks.items()}


@pytest.fixture(scope="module")
def templates():
    return _synth()


def test_every_stage_keeps_pitr_and_ttl_and_prod_cannot_be_deleted(templates):
    from shared.adapters.dynamo import schema

    assert "prod" in templates
    for stage, template in templates.items():
        tables = {
            k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::DynamoDB::Table"
        }
        assert len(tables) == 1, stage
        ((_, table),) = tables.items()
        props = table["Properties"]
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["TimeToLiveSpecification"] == {
            "AttributeName": schema.TTL_ATTRIBUTE,
            "Enabled": True,
        }
        if stage == "prod":
            assert props["DeletionProtectionEnabled"] is True
            # kept but for the rollback of its create (infra.cdk.stack.retained_removal_policy)
            assert table["DeletionPolicy"] == "RetainExceptOnCreate"
            assert table["UpdateReplacePolicy"] == "Retain"
