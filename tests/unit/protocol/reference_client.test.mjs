// Unit tests of the reference client library (shared/protocol/client/wordle-client.js) over a
// fake WebSocket and a manual clock: node --test tests/unit/protocol/reference_client.test.mjs
// (run by test_reference_client.py).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { WordleClient, ProtocolError, memoryStorage, backoffMs } from "../../../shared/protocol/client/wordle-client.js";

const LIBRARY = new URL("../../../shared/protocol/client/wordle-client.js", import.meta.url);

function harness(options = {}) {
  let now = 1_000_000;
  let timers = [];
  let nextId = 1;
  const sockets = [];
  class FakeSocket {
    constructor(url) { this.url = url; this.readyState = 0; this.sent = []; sockets.push(this); }
    send(data) { this.sent.push(JSON.parse(data)); }
    close() { this.readyState = 3; }
    open() { this.readyState = 1; this.onopen && this.onopen({}); }
    receive(message) { this.onmessage && this.onmessage({ data: typeof message === "string" ? message : JSON.stringify(message) }); }
    drop(code = 1006) { this.readyState = 3; this.onclose && this.onclose({ code }); }
  }
  const storage = options.storage || memoryStorage();
  const client = new WordleClient({
    url: "ws://test/ws", WebSocket: FakeSocket, storage, random: () => 0.5,
    now: () => now,
    setTimeout: (fn, ms) => { const id = nextId++; timers.push({ id, at: now + ms, fn }); return id; },
    clearTimeout: (id) => { timers = timers.filter((t) => t.id !== id); },
    ...options.client,
  });
  const seen = { events: [], frames: [], states: [], gaps: [] };
  client.on("event", (e) => seen.events.push(e));
  client.on("frame", (f) => seen.frames.push(f.map((e) => e.type)));
  client.on("state", (s, d) => seen.states.push(d.reason ? `${s}:${d.reason}` : s));
  client.on("gap", (g) => seen.gaps.push(g));
  const advance = async (ms) => {
    const until = now + ms;
    for (;;) {
      timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const due = timers[0];
      if (!due || due.at > until) break;
      timers.shift();
      now = due.at;
      due.fn();
      await Promise.resolve();
    }
    now = until;
    await flush();
  };
  const flush = async () => { for (let i = 0; i < 5; i++) await Promise.resolve(); };
  const socket = () => sockets[sockets.length - 1];
  const session = async (extra = {}) => {
    client.connect();
    socket().open();
    await flush();
    socket().receive({ type: "session", request_id: null, player: { id: "p1", nickname: "Ann", rating: 1000 }, token: "tok-2", resumed: false, protocol: 1, snapshot: null, ...extra });
  };
  return { client, storage, sockets, socket, seen, advance, flush, session, get now() { return now; } };
}

test("the library is an ES module that uses no Node built-ins or DOM", () => {
  const source = readFileSync(LIBRARY, "utf8");
  assert.doesNotMatch(source, /^\s*import\s/m);
  assert.doesNotMatch(source, /\brequire\(|\bprocess\.|\bBuffer\b|\bdocument\.|\bwindow\.|localStorage/);
  assert.match(source, /^export class WordleClient/m);
});

test("a first connection sends a tokenless session and a ping, and stores the reply's token", async () => {
  const h = harness();
  await h.session();
  assert.deepEqual(h.socket().sent.map((m) => m.action), ["session", "ping"]);
  assert.equal(h.socket().sent[0].token, undefined);
  assert.equal(h.socket().sent[0].protocol, "1.3", "the version it speaks");
  assert.equal(h.storage.get(), "tok-2");
  assert.equal(h.client.state, "session");
  assert.deepEqual(h.seen.states, ["connecting", "open", "session"]);
  assert.equal(h.client.player.id, "p1");
});

test("a stored token resumes, and a lost socket reconnects with backoff and resumes", async () => {
  const h = harness({ storage: memoryStorage("tok-1") });
  await h.session();
  assert.equal(h.sockets[0].sent[0].token, "tok-1");
  h.socket().drop();
  assert.equal(h.client.state, "reconnecting");
  await h.advance(900);
  assert.equal(h.sockets.length, 1, "not before the backoff");
  await h.advance(500);
  assert.equal(h.sockets.length, 2);
  h.socket().open();
  await h.flush();
  assert.equal(h.socket().sent[0].token, "tok-2", "the rotated token");
});

test("a batch is unfolded into its events, in order, and one frame", async () => {
  const h = harness();
  await h.session();
  h.socket().receive({ type: "batch", request_id: null, events: [
    { type: "turn", request_id: null, duel_id: "d", turn: 2 },
    { type: "duel_end", request_id: null, duel_id: "d", new_field: 1 },
    { type: "brand_new_type", request_id: null },
  ] });
  assert.deepEqual(h.seen.frames.at(-1), ["turn", "duel_end", "brand_new_type"]);
  assert.ok(!h.seen.events.some((e) => e.type === "batch"));
});

test("a request resolves with the event carrying its request_id, even inside a batch", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "guess", duel_id: "d", word: "crane" });
  const sent = h.socket().sent.at(-1);
  assert.equal(sent.action, "guess");
  assert.ok(sent.request_id);
  h.socket().receive({ type: "batch", request_id: null, events: [
    { type: "turn", request_id: sent.request_id, duel_id: "d" },
    { type: "standings", request_id: null },
  ] });
  assert.equal((await reply).type, "turn");
});

test("an error rejects the request with its code", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "join", language: "xx" });
  const { request_id } = h.socket().sent.at(-1);
  h.socket().receive({ type: "error", request_id, code: "unknown_language", message: "no" });
  await assert.rejects(reply, (err) => err instanceof ProtocolError && err.code === "unknown_language");
});

test("a type-less gateway frame sends the pending request again with the same request_id", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "guess", duel_id: "d", word: "crane" }, { deadlineMs: h.now + 20000 });
  const first = h.socket().sent.at(-1);
  h.socket().receive({ message: "Too Many Requests", connectionId: "c", requestId: "r" });
  assert.equal(h.socket().sent.length, 3, "not at once");
  await h.advance(250);
  const again = h.socket().sent.at(-1);
  assert.deepEqual(again, first);
  h.socket().receive({ type: "turn", request_id: first.request_id });
  h.socket().receive({ type: "turn", request_id: first.request_id }); // the repeat's answer
  assert.equal((await reply).type, "turn");
});

test("retries stop at the deadline: the request times out there", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "guess", duel_id: "d", word: "crane" }, { deadlineMs: h.now + 100 });
  const before = h.socket().sent.length;
  h.socket().receive({ message: "Internal server error", connectionId: "c", requestId: "r" });
  await h.advance(150);
  assert.equal(h.socket().sent.length, before, "a retry would land after the deadline");
  await assert.rejects(reply, (err) => err.code === "timeout");
});

test("try_again is retried after its retry_after_ms; rate_limited too", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "party_create" });
  const { request_id } = h.socket().sent.at(-1);
  h.socket().receive({ type: "error", request_id, code: "try_again", message: "busy", retry_after_ms: 1000 });
  assert.ok(!h.seen.events.some((e) => e.type === "error"), "a retried refusal is not an outcome");
  const count = h.socket().sent.length;
  await h.advance(999);
  assert.equal(h.socket().sent.length, count);
  await h.advance(200);
  assert.equal(h.socket().sent.length, count + 1);
  assert.equal(h.socket().sent.at(-1).request_id, request_id);
  h.socket().receive({ type: "party", request_id, status: "open" });
  assert.equal((await reply).type, "party");
});

test("heartbeat: a ping after 20 s without sending; 60 s of silence abandons the socket", async () => {
  const h = harness();
  await h.session();
  const pings = () => h.sockets[0].sent.filter((m) => m.action === "ping").length;
  await h.advance(19000);
  assert.equal(pings(), 1);
  await h.advance(1500);
  assert.equal(pings(), 2);
  await h.advance(39000);
  assert.equal(h.sockets.length, 1, "59.5 s of silence: still alive");
  await h.advance(2000);
  assert.equal(h.sockets.length, 2, "silent for 60 s: a new socket resumes");
  assert.ok(h.seen.states.includes("reconnecting:silent"));
});

test("the session reply's intervals shorten the configured ones, never lengthen them", async () => {
  const h = harness();
  await h.session({ ping_interval_ms: 5000, heartbeat_timeout_ms: 90000 });
  assert.equal(h.client.heartbeatMs, 5000);
  assert.equal(h.client.silenceMs, 60000);
  const pings = () => h.sockets[0].sent.filter((m) => m.action === "ping").length;
  await h.advance(5500);
  assert.equal(pings(), 2);
});

test("the clock offset comes from the pong of the shortest round trip", async () => {
  const h = harness();
  await h.session();
  const ping = h.socket().sent.find((m) => m.action === "ping");
  await h.advance(100);
  h.socket().receive({ type: "pong", request_id: ping.request_id, server_time_ms: h.now - 50 + 5000 });
  assert.equal(h.client.offsetMs, 5000);
  assert.equal(h.client.serverNow(), h.now + 5000);
});

test("events with sequence numbers: a jump is reported as a gap, a repeat dropped", async () => {
  const h = harness();
  await h.session({ snapshot: { round: { tournament_id: "t-1" }, seq: 1 } });
  const standings = (seq, tournament_id = "t-1") => ({ type: "standings", request_id: null, seq, tournament_id });
  for (const seq of [2, 4, 4, 5]) h.socket().receive(standings(seq));
  assert.deepEqual(h.seen.gaps, [{ expected: 3, got: 4 }]);
  assert.deepEqual(h.seen.events.filter((e) => e.type === "standings").map((e) => e.seq), [2, 4, 5]);
  // numbered events inside a batch count one by one; a null seq is not numbered
  h.socket().receive({ type: "batch", request_id: null, seq: null, events: [standings(6), standings(8)] });
  h.socket().receive({ type: "pong", request_id: null, seq: null, server_time_ms: 1 });
  assert.deepEqual(h.seen.gaps.at(-1), { expected: 7, got: 8 });
  // a resync's snapshot says where the player stands: numbering continues from it
  h.socket().receive({ type: "session", request_id: null, player: { id: "p1" }, snapshot: { round: { tournament_id: "t-1" }, seq: 11 } });
  h.socket().receive(standings(12));
  assert.equal(h.seen.gaps.length, 2);
  // a new tournament starts again at 1: no gap, no duplicate
  h.socket().receive(standings(1, "t-2"));
  h.socket().receive(standings(2, "t-2"));
  assert.equal(h.seen.gaps.length, 2);
  // the same tournament restarting at 1 (the server's counters were reset) starts afresh
  h.socket().receive(standings(3, "t-2"));
  h.socket().receive(standings(1, "t-2"));
  h.socket().receive(standings(2, "t-2"));
  assert.equal(h.seen.gaps.length, 2);
  assert.deepEqual(h.seen.events.filter((e) => e.type === "standings").map((e) => e.seq), [2, 4, 5, 6, 8, 12, 1, 2, 3, 1, 2]);
});

test("session_replaced closes for good: no reconnect", async () => {
  const h = harness();
  await h.session();
  h.socket().receive({ type: "error", request_id: null, code: "session_replaced", message: "elsewhere" });
  assert.equal(h.client.state, "closed");
  h.sockets[0].drop();
  await h.advance(60000);
  assert.equal(h.sockets.length, 1);
});

test("invalid_token starts over: the token is forgotten and a tokenless session sent", async () => {
  const h = harness({ storage: memoryStorage("old") });
  h.client.connect();
  h.socket().open();
  await h.flush();
  h.socket().receive({ type: "error", request_id: null, code: "invalid_token", message: "no" });
  await h.flush();
  assert.equal(h.storage.get(), null);
  assert.deepEqual(h.socket().sent.at(-1), { action: "session", protocol: "1.3" });
});

test("requests before the session reply are refused locally", async () => {
  const h = harness();
  await assert.rejects(h.client.request({ action: "join", language: "en" }), (err) => err.code === "not_connected");
  assert.equal(h.client.send({ action: "join", language: "en" }), null);
});

test("a lost connection rejects pending requests", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "leave" });
  h.socket().drop();
  await assert.rejects(reply, (err) => err.code === "connection_lost");
});

test("backoff has full jitter under its cap", () => {
  assert.equal(backoffMs(10, 250, 4000, () => 0.999), 3996);
  assert.equal(backoffMs(0, 250, 4000, () => 0), 0);
});

test("resync sends session with the token on the same connection; its reply redraws", async () => {
  const h = harness();
  await h.session();
  assert.equal(await h.client.resync(), true);
  assert.deepEqual(h.socket().sent.at(-1), { action: "session", protocol: "1.3", token: "tok-2" });
  h.socket().receive({ type: "session", request_id: null, player: { id: "p1" }, token: "tok-3", resumed: true, snapshot: {} });
  assert.equal(h.storage.get(), "tok-3");
  assert.equal(h.sockets.length, 1, "no reconnect");
  assert.equal(h.client.state, "session");
});

test("no_session fails the request and resyncs on the same connection", async () => {
  const h = harness();
  await h.session();
  const reply = h.client.request({ action: "join", language: "en" });
  const { request_id } = h.socket().sent.at(-1);
  h.socket().receive({ type: "error", request_id, code: "no_session", message: "send session" });
  await assert.rejects(reply, (err) => err.code === "no_session");
  await h.flush();
  assert.deepEqual(h.socket().sent.at(-1), { action: "session", protocol: "1.3", token: "tok-2" });
});

test("unsupported_protocol closes for good: reconnecting would not help", async () => {
  const h = harness();
  h.client.connect();
  h.socket().open();
  await h.flush();
  h.socket().receive({ type: "error", request_id: null, code: "unsupported_protocol", message: "update" });
  assert.equal(h.client.state, "closed");
  assert.ok(h.seen.states.includes("closed:unsupported_protocol"));
  await h.advance(60000);
  assert.equal(h.sockets.length, 1);
});

test("profile, leaderboard, history and replay send their action and resolve with the reply", async () => {
  const h = harness();
  await h.session();
  const calls = [
    [() => h.client.profile(), { action: "profile" }, "profile"],
    [() => h.client.profile("p2"), { action: "profile", player_id: "p2" }, "profile"],
    [() => h.client.leaderboard("rating"), { action: "leaderboard", board: "rating" }, "leaderboard"],
    [
      () => h.client.leaderboard("weekly", { language: "en", week: "previous" }),
      { action: "leaderboard", board: "weekly", language: "en", week: "previous" },
      "leaderboard",
    ],
    [() => h.client.history(), { action: "history" }, "history"],
    [
      () => h.client.history({ playerId: "p2", cursor: "abc", limit: 5 }),
      { action: "history", player_id: "p2", cursor: "abc", limit: 5 },
      "history",
    ],
    [() => h.client.replay("t-1"), { action: "replay", tournament_id: "t-1" }, "replay"],
  ];
  for (const [call, expected, type] of calls) {
    const reply = call();
    const { request_id, ...sent } = h.socket().sent.at(-1);
    assert.deepEqual(sent, expected);
    h.socket().receive({ type, request_id, seq: null });
    assert.equal((await reply).type, type);
  }
  const missing = h.client.replay("t-9");
  const { request_id } = h.socket().sent.at(-1);
  h.socket().receive({ type: "error", request_id, code: "not_found", message: "no" });
  await assert.rejects(missing, (err) => err instanceof ProtocolError && err.code === "not_found");
});
