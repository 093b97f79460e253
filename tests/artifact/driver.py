"""Artifact test driver: imports every packaged function and plays an 8-player tournament
through them, the way API Gateway and the deadline state machine invoke them.

Run by ``tests/artifact/test_artifact.py`` as ``python -I -S driver.py CONFIG RESULT`` on the
Lambda runtime's base interpreter: no site-packages, no user site, no ``PYTHONPATH``, no script
folder; it puts only the code asset and the layer's ``python/`` on ``sys.path`` (as Lambda does:
``/var/task`` then ``/opt/python``). So it may import the standard library, the asset and the
layer — nothing from the repository or the test environment.

CONFIG (JSON): ``code`` and ``layer`` (asset folders), ``handlers`` (every function's
``Handler``), ``routes`` (route key -> ``Handler``), ``clock`` (the clock function's
``Handler``), ``recorded`` (URL of the recorder's ``GET /_recorded``), ``table``, ``players``,
``language``, ``timeout_s``. The environment (``TABLE_NAME``, ``CALLBACK_URL``, ``AWS_ENDPOINT_URL``
...) is set by the test.

The game: ``$connect``, ``session`` and ``join`` for each player; then, as the Step Functions
loop would, each round's intro timer ``{"kind": "intro", "ref", "seq", "due_ms", "due",
"loop_started_ms"}`` goes to the clock function once real time has passed its Wait timestamp
``due`` (the intro deadline ``due_ms``), and its answer is the next state, waited for the same
way, while ``loop`` is true (after ``handover`` a successor execution gets only the state
fields); players whose turn it is guess — the first mover of a duel plays another valid word
when one is known (a secret revealed earlier, of the same length), the other the secret, read
from the table. It ends when every player received ``tournament_end``.

RESULT (JSON): what was imported and from where, the modules compiled from source instead of
loaded from their shipped cache file, the layer's distributions and versions, counts and
timings. Exit status 0 on success; any failure raises (non-zero, traceback on
stderr).
"""

import datetime
import importlib
import json
import os
import sys
import time
import urllib.request
import uuid
import warnings

# As in pyproject.toml's pytest settings: Powertools warns when a handler published no metric.
warnings.filterwarnings("ignore", "No application metrics to publish", UserWarning)

STATE_FIELDS = ("kind", "ref", "seq", "due_ms", "due", "loop_started_ms")
"""What a loop hands to its successor execution (the deadline machine's StartSuccessor)."""


def now_ms():
    return time.time_ns() // 1_000_000


def wake_ms(state):
    """When the machine's Wait ends for ``state`` (UTC ms): at its timestamp ``due``
    (ISO-8601, the Wait's ``TimestampPath``; the clock function may set it before ``due_ms``
    to hand over, or round it up), else at ``due_ms``."""
    due = state.get("due")
    if not isinstance(due, str):
        return state["due_ms"]
    parsed = datetime.datetime.fromisoformat(due.replace("Z", "+00:00"))
    return round(parsed.timestamp() * 1000)


def iso_utc(ms):
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def ws_event(route, connection_id, body, at_ms):
    """An API Gateway WebSocket event (the shape of ``infra.emulator.events.ws_event``)."""
    event_type = {"$connect": "CONNECT", "$disconnect": "DISCONNECT"}.get(route, "MESSAGE")
    ctx = {
        "routeKey": route,
        "eventType": event_type,
        "extendedRequestId": f"x{at_ms}",
        "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(at_ms / 1000)),
        "messageDirection": "IN",
        "stage": "artifact",
        "connectedAt": at_ms,
        "requestTimeEpoch": at_ms,
        "identity": {"sourceIp": "127.0.0.1", "userAgent": "artifact-driver"},
        "requestId": f"r{uuid.uuid4().hex[:12]}",
        "domainName": "localhost",
        "connectionId": connection_id,
        "apiId": "artifact",
    }
    event = {"requestContext": ctx, "isBase64Encoded": False}
    if event_type == "MESSAGE":
        ctx["messageId"] = f"m{uuid.uuid4().hex[:12]}"
        event["body"] = body
    elif event_type == "CONNECT":
        event["headers"] = {"Host": "localhost"}
        event["multiValueHeaders"] = {"Host": ["localhost"]}
    else:
        ctx["disconnectStatusCode"] = 1001
        ctx["disconnectReason"] = "going away"
    return event


class Context:
    """The Lambda context object's attributes that Powertools reads."""

    def __init__(self, handler):
        module, attr = handler.split(".")[1:3]
        self.function_name = module if attr == "handler" else attr
        self.function_version = "$LATEST"
        self.invoked_function_arn = (
            f"arn:aws:lambda:us-east-1:123456789012:function:{self.function_name}"
        )
        self.memory_limit_in_mb = 1024
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "artifact"

    def get_remaining_time_in_millis(self):
        return 10_000


class Game:
    def __init__(self, config, handlers):
        self.config = config
        self.handlers = handlers
        self.seen = 0
        self.inbox = {}  # connection id -> messages
        self.duels = {}  # duel id -> {"tid", "players", "next", "over", "length", "rows"}
        self.loops = {}  # (tid, round) -> the next state to hand the clock function
        self.rounds = {}  # (tid, round) -> intro deadline ms
        self.revealed = []  # secrets revealed by duel_end, in order
        self.tries = {}  # duel id -> guesses sent
        self.counts = {"invocations": 0, "clock_wakes": 0, "clock_applied": 0, "guesses": 0}
        self.invalid_guess_error = None
        self.dynamodb = None
        self.wakes = {}  # (tid, round) -> clock calls

    # ----------------------------------------------------------------------- invoking
    def invoke(self, route, connection_id, body=None):
        handler = self.config["routes"].get(route) or self.config["routes"]["$default"]
        answer = self.handlers[handler](
            ws_event(route, connection_id, body, now_ms()), Context(handler)
        )
        self.counts["invocations"] += 1
        if answer != {"statusCode": 200}:
            raise AssertionError(f"{route} answered {answer!r}")
        self.poll()

    def send(self, connection_id, action, **fields):
        self.invoke(action, connection_id, json.dumps({"action": action, **fields}))

    def wake(self, key):
        state = self.loops.pop(key)
        self.wakes[key] = self.wakes.get(key, 0) + 1
        if self.wakes[key] > 50:
            raise AssertionError(f"the clock loop of {key} spins: {state!r}")
        handler = self.config["clock"]
        answer = self.handlers[handler](state, Context(handler))
        self.counts["clock_wakes"] += 1
        self.counts["clock_applied"] += bool(answer.get("applied"))
        missing = [k for k in ("loop", "due_ms", "handover") if k not in answer]
        if missing:
            raise AssertionError(f"the clock function's answer lacks {missing}: {answer!r}")
        if answer["loop"]:
            # The machine's Choice: handover starts a successor with the state fields only;
            # a plain loop waits until the new due and hands the whole payload back in.
            nxt = {k: answer[k] for k in STATE_FIELDS} if answer["handover"] else answer
            self.loops[key] = nxt
        self.poll()

    # ----------------------------------------------------------------------- messages
    def poll(self):
        url = f"{self.config['recorded']}?since={self.seen}"
        with urllib.request.urlopen(url, timeout=10) as response:
            new = json.loads(response.read())
        self.seen += len(new)
        for connection_id, body in new:
            posted = json.loads(body)
            # one post per recipient per change: several events come as one ``batch``
            batch = posted.get("type") == "batch" if isinstance(posted, dict) else False
            for message in posted["events"] if batch else [posted]:
                self.inbox.setdefault(connection_id, []).append(message)
                self.on_message(connection_id, message)

    def on_message(self, connection_id, m):
        kind = m.get("type")
        if kind == "error":
            if m.get("code") == "internal_error":
                raise AssertionError(f"internal_error answered to {connection_id}: {m!r}")
            return
        if kind == "round":
            key = (m["tournament_id"], m["round"])
            if key not in self.rounds:
                due = m["intro_deadline_ms"]
                self.rounds[key] = due
                self.loops[key] = {
                    "kind": "intro",
                    "ref": m["tournament_id"],
                    "seq": m["round"],
                    "due_ms": due,
                    "due": iso_utc(due),
                    "loop_started_ms": now_ms(),
                }
        elif kind == "duel_start":
            self.duels.setdefault(
                m["duel_id"],
                {
                    "tid": m["tournament_id"],
                    "players": m["players"],
                    "next": m["next_player"],
                    "over": False,
                    "length": m["length"],
                },
            )
        elif kind == "turn" and m["duel_id"] in self.duels:
            self.duels[m["duel_id"]]["next"] = m.get("next_player")
        elif kind == "duel_end":
            duel = self.duels.setdefault(m["duel_id"], {"tid": m["tournament_id"]})
            if not duel.get("over"):
                duel["over"] = True
                self.revealed.append(m["word"])

    def messages(self, connection_id, kind):
        return [m for m in self.inbox.get(connection_id, []) if m.get("type") == kind]

    # ----------------------------------------------------------------------- playing
    def secret(self, tid, duel_id):
        """The duel's secret, read from the table as stored (the asset's own codec)."""
        import boto3
        from boto3.dynamodb.types import TypeDeserializer

        from shared.adapters.dynamo import schema
        from shared.adapters.dynamo.tournament_document import tournament_from_item

        if self.dynamodb is None:  # AWS_ENDPOINT_URL points it at the test's moto
            self.dynamodb = boto3.client("dynamodb")
        key = {k: {"S": v} for k, v in schema.tournament_key(tid).items()}
        item = self.dynamodb.get_item(TableName=self.config["table"], Key=key, ConsistentRead=True)
        de = TypeDeserializer()
        stored = tournament_from_item({k: de.deserialize(v) for k, v in item["Item"].items()})
        for duel in stored.tournament.duels:
            if duel.duel_id == duel_id:
                return duel.word
        raise AssertionError(f"duel {duel_id} is not in tournament {tid}")

    def move(self, connection_of, duel_id, duel):
        player = duel["next"]
        secret = self.secret(duel["tid"], duel_id)
        tries = self.tries.setdefault(duel_id, 0)
        if self.invalid_guess_error is None:
            # once per game: a word that is not in the list is refused, the turn stays
            before = len(self.messages(connection_of[player], "error"))
            self.send(connection_of[player], "guess", duel_id=duel_id, word="q" * duel["length"])
            errors = self.messages(connection_of[player], "error")
            if len(errors) != before + 1:
                raise AssertionError(f"an invalid guess got no error: {errors!r}")
            self.invalid_guess_error = errors[-1]["code"]
            if duel["next"] != player or duel["over"]:
                raise AssertionError("an invalid guess used up the turn")
        decoys = [w for w in self.revealed if len(w) == len(secret) and w != secret]
        word = decoys[-1] if tries == 0 and decoys else secret
        self.tries[duel_id] = tries + 1
        self.counts["guesses"] += 1
        self.send(connection_of[player], "guess", duel_id=duel_id, word=word)

    def play(self):
        cfg = self.config
        connections = [f"Art{i:02d}{uuid.uuid4().hex[:10]}=" for i in range(cfg["players"])]
        for cid in connections:
            self.invoke("$connect", cid)
            self.send(cid, "session")
        connection_of = {}
        for cid in connections:
            (session,) = self.messages(cid, "session")
            connection_of[session["player"]["id"]] = cid
        for cid in connections:
            self.send(cid, "join", language=cfg["language"])
        started = time.monotonic()
        while not all(self.messages(cid, "tournament_end") for cid in connections):
            if time.monotonic() - started > cfg["timeout_s"]:
                raise AssertionError(
                    f"no tournament_end after {cfg['timeout_s']} s: "
                    f"{sum(bool(self.messages(c, 'tournament_end')) for c in connections)}/8"
                )
            due = [k for k, state in self.loops.items() if wake_ms(state) <= now_ms()]
            if due:
                self.wake(min(due, key=lambda k: wake_ms(self.loops[k])))
                continue
            movers = [
                (duel_id, duel)
                for duel_id, duel in self.duels.items()
                if not duel.get("over") and duel.get("next") in connection_of
            ]
            if movers:
                self.move(connection_of, *movers[0])
                continue
            if not self.loops:
                raise AssertionError("nothing to do: no player to move and no deadline pending")
            wait_ms = min(wake_ms(state) for state in self.loops.values()) - now_ms()
            time.sleep(min(max(wait_ms, 1), 200) / 1000)
        return connections, connection_of


def origins(code, layer, stdlib_path):
    """Where each imported module came from — counts per ``code``, ``layer``, ``stdlib``
    (under an entry of ``stdlib_path``, not in a site-packages) — and any other file (a
    stray, which must not exist)."""
    roots = {"code": code, "layer": layer, **{f"stdlib{i}": p for i, p in enumerate(stdlib_path)}}
    roots = {k: os.path.realpath(v) + os.sep for k, v in roots.items()}
    counts = {"code": 0, "layer": 0, "stdlib": 0, "builtin": 0}
    strays = []
    me = os.path.realpath(__file__)
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path:
            counts["builtin"] += 1
            continue
        real = os.path.realpath(path)
        if real == me:  # this script (``__main__``, and multiprocessing's alias of it)
            continue
        where = next((k for k, root in roots.items() if real.startswith(root)), None)
        if where is not None and where.startswith("stdlib"):
            where = None if "site-packages" in real else "stdlib"
        if where is None:
            strays.append(f"{name}: {path}")
        else:
            counts[where] += 1
    return counts, strays


def watch_source_compiles():
    """Record the file of every module the import system compiles from source from now on (a
    module whose cache file is missing, stale or of another Python): ``SourceLoader.get_code``
    calls ``source_to_code`` only then. Returns the list it fills."""
    import importlib._bootstrap_external as bootstrap  # the import system's own loaders

    compiled = []
    original = bootstrap.SourceLoader.source_to_code

    def source_to_code(self, data, path, *args, **kwargs):
        compiled.append(path)
        return original(self, data, path, *args, **kwargs)

    bootstrap.SourceLoader.source_to_code = source_to_code
    return compiled


def main(config_path, result_path):
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    # Isolated: what -I -S promise, checked before anything is imported from outside stdlib.
    if not (sys.flags.isolated and sys.flags.no_site and sys.flags.safe_path):
        raise AssertionError(f"not isolated: {sys.flags}")
    base = os.path.realpath(sys.base_prefix)
    outside = [p for p in sys.path if not os.path.realpath(p).startswith(base)]
    if outside:
        raise AssertionError(f"sys.path reaches beyond the standard library: {outside}")
    stdlib_path = list(sys.path)
    layer = os.path.join(config["layer"], "python")
    sys.path[:0] = [config["code"], layer]
    compiled = watch_source_compiles()

    t0 = time.perf_counter()
    handlers = {}
    for spec in sorted(set(config["handlers"])):
        module, _, attr = spec.rpartition(".")
        handlers[spec] = getattr(importlib.import_module(module), attr)
    import_s = time.perf_counter() - t0

    t1 = time.perf_counter()
    game = Game(config, handlers)
    connections, connection_of = game.play()
    play_s = time.perf_counter() - t1

    import importlib.metadata as md

    counts, strays = origins(config["code"], layer, stdlib_path)
    if strays:
        raise AssertionError(f"modules from outside the assets: {strays}")
    result = {
        "python": ".".join(map(str, sys.version_info[:3])),
        "executable": sys.executable,
        "sys_path": sys.path,
        "imported": sorted(handlers),
        "module_origins": counts,
        "layer_distributions": {
            d.metadata["Name"]: d.version for d in md.distributions(path=[layer])
        },
        "boto3_file": sys.modules["boto3"].__file__,
        "compiled_from_source": {
            "code": sorted(p for p in compiled if p.startswith(config["code"] + os.sep)),
            "layer": sorted(p for p in compiled if p.startswith(layer + os.sep)),
            "other": len([p for p in compiled if not p.startswith((config["code"], layer))]),
        },
        "players": {
            cid: {"player_id": pid, "tournament_end": game.messages(cid, "tournament_end")}
            for pid, cid in connection_of.items()
        },
        "connections": connections,
        "rounds": len(game.rounds),
        "duels": len(game.duels),
        "invalid_guess_error": game.invalid_guess_error,
        "counts": game.counts,
        "import_s": round(import_s, 3),
        "play_s": round(play_s, 3),
    }
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
