// Wordle Tournament reference client: the WebSocket protocol of shared/protocol/asyncapi.json
// (guide: shared/protocol/README.md) as a small ES module for browsers, React Native and Node 20+.
// No platform API but a WebSocket (global or injected), timers and an injected token store:
// no fs, no DOM, no Node built-ins. Types: wordle-client.d.ts (protocol.d.ts is generated from
// the contract by Modelina).

/** The protocol version this library speaks, declared in every `session` (MAJOR.MINOR). */
export const PROTOCOL_VERSION = "1.3";

/** Defaults, from the guide: a message every 20 s, 60 s silence is a dead connection. */
export const DEFAULTS = Object.freeze({
  heartbeatMs: 20000,
  silenceMs: 60000,
  requestTimeoutMs: 10000,
  reconnectBaseMs: 1000,
  reconnectMaxMs: 10000,
  retryBaseMs: 250,
  retryMaxMs: 4000,
  retryAttempts: 5,
  clockSamples: 8,
});

/** Error codes a request is sent again for (same request_id): nothing was saved. */
const RETRY_CODES = new Set(["rate_limited", "try_again"]);
/** Error codes about the session itself, handled by the connection (not a request's outcome). */
const SESSION_CODES = new Set([
  "invalid_token", "session_bound", "session_replaced", "unsupported_protocol", "no_session",
]);

/** A request refused or failed: `code` is the protocol's error code, or one of the library's own:
 * `timeout` (no answer in time), `connection_lost`, `not_connected`, `closed`. */
export class ProtocolError extends Error {
  constructor(code, message, event = null) {
    super(message || code);
    this.name = "ProtocolError";
    this.code = code;
    this.event = event;
  }
}

/** A token store in memory (tests, or a page that must forget the player on reload). */
export function memoryStorage(initial = null) {
  let token = initial;
  return { get: () => token, set: (value) => { token = value; }, clear: () => { token = null; } };
}

/** A token store over a Web Storage object (a page's local storage) under `key`. On React Native
 * pass an object with async get/set/clear over the platform's secure store instead. */
export function webStorage(store, key = "wt.token") {
  return {
    get: () => store.getItem(key),
    set: (value) => store.setItem(key, value),
    clear: () => store.removeItem(key),
  };
}

/** Exponential backoff with full jitter: a random wait in [0, min(max, base * 2^attempt)]. */
export function backoffMs(attempt, baseMs, maxMs, random = Math.random) {
  return Math.floor(random() * Math.min(maxMs, baseMs * 2 ** attempt));
}

/**
 * One player's connection. States: idle -> connecting -> open (socket up, session sent) ->
 * session (the reply came: requests may be sent) -> reconnecting (socket lost; a new one after a
 * backoff) -> ... ; closed (close() called, or the session was replaced elsewhere: no reconnect).
 *
 * Listeners (`on(name, fn)`, returns an unsubscribe function):
 *   state (state, detail)  the connection state changed; detail.reason on closed/reconnecting
 *   event (event)          each server event, batches unfolded, in order
 *   frame (events)         after the events of one WebSocket message (redraw once here)
 *   gap ({expected, got})  an event's `seq` skipped some: events were lost; call resync()
 *   untyped (frame)        a frame without `type` (API Gateway's own: throttled, failed)
 */
export class WordleClient {
  constructor(options) {
    const o = { ...DEFAULTS, ...options };
    if (!o.url) throw new TypeError("url is required");
    this.url = o.url;
    this.options = o;
    this.WebSocket = o.WebSocket || globalThis.WebSocket;
    if (!this.WebSocket) throw new TypeError("no WebSocket: pass options.WebSocket");
    this.storage = o.storage || memoryStorage();
    this.now = o.now || (() => Date.now());
    this.random = o.random || Math.random;
    this.timers = {
      set: o.setTimeout || ((fn, ms) => setTimeout(fn, ms)),
      clear: o.clearTimeout || ((id) => clearTimeout(id)),
    };
    this.heartbeatMs = o.heartbeatMs;
    this.silenceMs = o.silenceMs;

    this.state = "idle";
    this.socket = null;
    this.player = null;
    this.protocol = null;
    this.connects = 0;
    this.retries = 0;
    this.retryAt = 0;
    this.lostAt = 0;
    this.heardAt = 0;
    this.sentAt = 0;
    this.offsetMs = 0;
    this.lastSeq = null;
    this.seqTournament = null;

    this._listeners = {};
    this._pending = new Map(); // request_id -> pending request
    this._pings = new Map(); // request_id -> sent at (local ms)
    this._clock = []; // [{offset, rtt}], the latest samples
    this._ids = 0;
    this._prefix = Math.floor(this.random() * 36 ** 4).toString(36);
    this._reconnectTimer = null;
    this._tick = null;
  }

  // ---- public API -------------------------------------------------------------------------

  on(name, fn) {
    (this._listeners[name] || (this._listeners[name] = new Set())).add(fn);
    return () => this._listeners[name].delete(fn);
  }

  /** Open the connection (and keep it open: reconnect and resume until close()). */
  connect() {
    if (this.state === "connecting" || this.state === "open" || this.state === "session") return;
    this._clearReconnect();
    this._open();
  }

  /** Reconnect at once instead of waiting out the backoff (e.g. the device came back online). */
  reconnectNow() {
    if (this.state !== "reconnecting") return;
    this._clearReconnect();
    this._open();
  }

  /** Give up the current socket (it looks dead) and resume on a new one at once. */
  abandon(reason = "abandoned") {
    const ws = this.socket;
    if (!ws) return;
    this._detach(ws);
    try { ws.close(); } catch { /* already closing */ }
    this._lost(reason, true);
  }

  /** Close for good: no reconnect; pending requests are rejected (`closed`). */
  close() {
    this._clearReconnect();
    this._stopTick();
    const ws = this.socket;
    this.socket = null;
    if (ws) {
      this._detach(ws);
      try { ws.close(1000); } catch { /* already closing */ }
    }
    this._rejectAll("closed");
    this._setState("closed", { reason: "closed" });
  }

  /** The server's clock now (ms), from the pong offset. */
  serverNow() {
    return this.now() + this.offsetMs;
  }

  /**
   * Send a request and await its outcome: the event that carries its request_id (a reply, alone
   * or inside a batch) resolves; an `error` rejects with ProtocolError(code). Type-less gateway
   * frames (throttled, internal error) and `rate_limited` / `try_again` send it again with the
   * same request_id after a backoff with jitter (`retry_after_ms` when the error has one), never
   * past `deadlineMs` (absolute server ms, e.g. a turn's deadline_ms) nor `timeoutMs`.
   */
  request(message, options = {}) {
    if (this.state !== "session" && message.action !== "ping" && message.action !== "session") {
      return Promise.reject(new ProtocolError("not_connected", "no session on this connection"));
    }
    const request_id = message.request_id || this.nextRequestId(message.action);
    const frame = { ...message, request_id };
    const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs;
    const giveUpAt = Math.min(
      this.now() + timeoutMs,
      options.deadlineMs != null ? options.deadlineMs - this.offsetMs : Infinity,
    );
    return new Promise((resolve, reject) => {
      const entry = { frame, resolve, reject, attempts: 0, giveUpAt, timer: null, retryTimer: null };
      entry.timer = this.timers.set(
        () => this._settle(request_id, new ProtocolError("timeout", `no answer to ${frame.action}`)),
        Math.max(0, giveUpAt - this.now()),
      );
      this._pending.set(request_id, entry);
      this._write(frame);
    });
  }

  /** Send a request without awaiting it: returns its request_id (null when not connected). The
   * outcome still arrives as events, and the retries of request() apply. */
  send(message, options = {}) {
    if (this.state !== "session") return null;
    const request_id = message.request_id || this.nextRequestId(message.action);
    this.request({ ...message, request_id }, options).catch(() => {});
    return request_id;
  }

  /** `profile` (since 1.3): a player's public profile, by id (default: you). Resolves with the
   * `profile` reply; rejects with ProtocolError `not_found` / `invalid_value`. */
  profile(playerId = undefined, options = {}) {
    return this.request({ action: "profile", ...(playerId ? { player_id: playerId } : {}) }, options);
  }

  /** `leaderboard` (since 1.3): `board` "rating", or "weekly" with `language` and `week`
   * ("current" or "previous"). Resolves with the `leaderboard` reply. */
  leaderboard(board, { language, week } = {}, options = {}) {
    const message = { action: "leaderboard", board };
    if (language != null) message.language = language;
    if (week != null) message.week = week;
    return this.request(message, options);
  }

  /** `history` (since 1.3): one page of a player's finished tournaments, newest first; pass the
   * reply's `next_cursor` as `cursor` for the next. Resolves with the `history` reply. */
  history({ playerId, cursor, limit } = {}, options = {}) {
    const message = { action: "history" };
    if (playerId != null) message.player_id = playerId;
    if (cursor != null) message.cursor = cursor;
    if (limit != null) message.limit = limit;
    return this.request(message, options);
  }

  /** `replay` (since 1.3): a finished tournament's record (`reply.record`, the export format).
   * Resolves with the `replay` reply; rejects `not_found` while it runs. */
  replay(tournamentId, options = {}) {
    return this.request({ action: "replay", tournament_id: tournamentId }, options);
  }

  nextRequestId(action = "request") {
    return `${action}-${this._prefix}-${++this._ids}`;
  }

  /** Resync without reconnecting (guide: "Resync without reconnecting"): `session` with the
   * stored token on this connection; the reply is a resume's, with the snapshot to redraw from.
   * Do it when a gap shows. Returns false when there is no session or no token. */
  async resync() {
    if (this.state !== "session") return false;
    const token = await this.storage.get();
    return !!token && this._write(this._sessionMessage(token));
  }

  /** Send a ping (clock sample and keep-alive); the pong is handled here. */
  ping() {
    const request_id = this.nextRequestId("ping");
    if (this._write({ action: "ping", request_id })) this._pings.set(request_id, this.now());
  }

  // ---- connection -------------------------------------------------------------------------

  _setState(state, detail = {}) {
    if (this.state === state && !detail.force) return;
    this.state = state;
    this._emit("state", state, detail);
  }

  _open() {
    this._setState("connecting");
    let ws;
    try {
      ws = new this.WebSocket(this.url);
    } catch (err) {
      this._lost("connect_failed", false);
      return;
    }
    this.socket = ws;
    ws.onopen = () => this._onOpen(ws);
    ws.onmessage = (e) => this._onMessage(ws, e.data);
    ws.onclose = (e) => { if (ws === this.socket) this._lost(`closed ${e && e.code}`, false); };
    ws.onerror = () => {}; // a close follows
  }

  async _onOpen(ws) {
    if (ws !== this.socket) return;
    this.connects++;
    this.retries = 0;
    this.heardAt = this.now();
    this.lastSeq = null;
    this._setState("open");
    this._startTick();
    const token = await this.storage.get();
    if (ws !== this.socket) return;
    this._write(this._sessionMessage(token));
    this.ping();
  }

  _sessionMessage(token) {
    const message = { action: "session", protocol: PROTOCOL_VERSION };
    if (token) message.token = token;
    return message;
  }

  _lost(reason, now) {
    this._stopTick();
    this.socket = null;
    this._pings.clear();
    this._rejectAll("connection_lost");
    if (this.state === "closed") return;
    if (!this.lostAt) this.lostAt = this.now();
    const o = this.options;
    const wait = now ? 0 : Math.min(o.reconnectMaxMs, o.reconnectBaseMs * 2 ** this.retries++)
      + backoffMs(0, o.reconnectBaseMs / 4, o.reconnectBaseMs / 4, this.random);
    this.retryAt = this.now() + wait;
    this._setState("reconnecting", { reason, retryAt: this.retryAt, force: true });
    this._clearReconnect();
    this._reconnectTimer = this.timers.set(() => { this._reconnectTimer = null; this._open(); }, wait);
  }

  _detach(ws) {
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
  }

  _clearReconnect() {
    if (this._reconnectTimer !== null) this.timers.clear(this._reconnectTimer);
    this._reconnectTimer = null;
  }

  _startTick() {
    this._stopTick();
    const every = Math.min(this.heartbeatMs, 1000);
    const tick = () => {
      this._tick = this.timers.set(tick, every);
      if (!this.socket || (this.state !== "open" && this.state !== "session")) return;
      const now = this.now();
      if (now - this.heardAt > this.silenceMs) { this.abandon("silent"); return; }
      if (now - this.sentAt >= this.heartbeatMs) this.ping();
    };
    this._tick = this.timers.set(tick, every);
  }

  _stopTick() {
    if (this._tick !== null) this.timers.clear(this._tick);
    this._tick = null;
  }

  _write(frame) {
    const ws = this.socket;
    if (!ws || ws.readyState !== 1) return false; // 1: OPEN
    ws.send(JSON.stringify(frame));
    this.sentAt = this.now();
    return true;
  }

  // ---- inbound ----------------------------------------------------------------------------

  _onMessage(ws, data) {
    if (ws !== this.socket) return;
    this.heardAt = this.now();
    let frame;
    try { frame = JSON.parse(data); } catch { return; }
    if (!frame || typeof frame !== "object" || Array.isArray(frame)) return;
    if (typeof frame.type !== "string") { this._untyped(frame); return; }
    const events = frame.type === "batch" && Array.isArray(frame.events) ? frame.events : [frame];
    const handled = [];
    for (const event of events) {
      if (!event || typeof event !== "object" || typeof event.type !== "string") continue;
      if (!this._sequence(event)) continue;
      if (this._handle(event)) handled.push(event);
    }
    this._emit("frame", handled);
  }

  _sequence(event) {
    // Per-player sequence numbers within a tournament (protocol 1.2; null or absent: not
    // numbered): a jump is a gap (events lost on the way: resync), an old number a duplicate
    // (dropped). A session reply's snapshot says where the player stands (its `seq`, of the
    // tournament it shows); a numbered event of another tournament starts afresh.
    if (event.type === "session") {
      const snap = event.snapshot;
      const shown = snap && (snap.round || snap.standings || snap.eliminated || snap.rating || snap.tournament_end);
      this.lastSeq = snap && typeof snap.seq === "number" ? snap.seq : null;
      this.seqTournament = shown ? shown.tournament_id : null;
      return true;
    }
    if (typeof event.seq !== "number") return true;
    if (event.tournament_id !== this.seqTournament) {
      this.seqTournament = event.tournament_id;
      this.lastSeq = null;
    }
    // seq 1 starts a sequence: the first event, or the server's counters restarted (a rollback)
    if (this.lastSeq === null || event.seq === 1) { this.lastSeq = event.seq; return true; }
    if (event.seq <= this.lastSeq) return false;
    if (event.seq > this.lastSeq + 1) this._emit("gap", { expected: this.lastSeq + 1, got: event.seq });
    this.lastSeq = event.seq;
    return true;
  }

  _handle(event) {
    // Returns whether listeners hear of it (retried refusals and connection chores do not).
    const id = event.request_id;
    switch (event.type) {
      case "session":
        return this._onSession(event);
      case "pong":
        this._onPong(event);
        break;
      case "error":
        if (SESSION_CODES.has(event.code) && this._onSessionError(event)) return true;
        if (id && this._pending.has(id) && RETRY_CODES.has(event.code)) {
          if (this._retry(id, event.retry_after_ms)) return false;
        }
        if (id) this._settle(id, new ProtocolError(event.code, event.message, event));
        return true;
      default:
        break;
    }
    if (id && this._pending.has(id)) this._settle(id, null, event);
    this._emit("event", event);
    return true;
  }

  _onSession(event) {
    this.player = event.player || this.player;
    this.protocol = event.protocol ?? null;
    // the server's intervals, when it sends them, bound the configured ones (never lengthen them)
    if (typeof event.ping_interval_ms === "number") {
      this.heartbeatMs = Math.min(this.options.heartbeatMs, event.ping_interval_ms);
    }
    if (typeof event.heartbeat_timeout_ms === "number") {
      this.silenceMs = Math.min(this.options.silenceMs, event.heartbeat_timeout_ms);
    }
    if (event.token) this.storage.set(event.token);
    this.lostAt = 0;
    this.retryAt = 0;
    this._setState("session", { resumed: !!event.resumed, force: true });
    if (event.request_id && this._pending.has(event.request_id)) this._settle(event.request_id, null, event);
    this._emit("event", event);
    return true;
  }

  _onSessionError(event) {
    if (event.code === "session_replaced") {
      // the player resumed elsewhere: this connection is over, and must not come back by itself
      this._clearReconnect();
      this._stopTick();
      const ws = this.socket;
      this.socket = null;
      if (ws) this._detach(ws);
      this._rejectAll("closed");
      this._emit("event", event);
      this._setState("closed", { reason: "replaced" });
      return true;
    }
    if (event.code === "unsupported_protocol") {
      // this library's major version is not served: reconnecting would not help (update the app)
      this._clearReconnect();
      this._stopTick();
      const ws = this.socket;
      this.socket = null;
      if (ws) { this._detach(ws); try { ws.close(1000); } catch { /* already closing */ } }
      this._rejectAll("closed");
      this._emit("event", event);
      this._setState("closed", { reason: "unsupported_protocol" });
      return true;
    }
    if (event.code === "no_session" && this.state === "session") {
      // the server lost this connection's session (it moved or closed): the request fails,
      // and the session is resumed on the same connection
      if (event.request_id) this._settle(event.request_id, new ProtocolError(event.code, event.message, event));
      this._emit("event", event);
      this.resync();
      return true;
    }
    if (event.code === "invalid_token" && this.state !== "session") {
      // the stored token resumes nothing any more: a new player
      Promise.resolve(this.storage.clear()).then(() => this._write(this._sessionMessage(null)));
      this._emit("event", event);
      return true;
    }
    if (event.code === "session_bound" && this.state !== "session") {
      // this connection already belongs to a player: a new connection resumes with the token
      this._emit("event", event);
      this.abandon("session_bound");
      return true;
    }
    return false;
  }

  _onPong(event) {
    // API Gateway answers pings in order: a pong without request_id is the oldest ping's.
    const id = event.request_id || this._pings.keys().next().value;
    const sent = this._pings.get(id);
    if (sent === undefined || typeof event.server_time_ms !== "number") return;
    this._pings.delete(id);
    const received = this.now();
    const sample = { offset: event.server_time_ms - (sent + received) / 2, rtt: received - sent };
    this._clock.push(sample);
    if (this._clock.length > this.options.clockSamples) this._clock.shift();
    // the sample with the shortest round trip bounds the error best (NTP's clock filter)
    const best = this._clock.reduce((a, b) => (b.rtt < a.rtt ? b : a));
    this.offsetMs = best.offset;
  }

  _untyped(frame) {
    // API Gateway's own frame ({"message": "Too Many Requests" | "Internal server error", ...})
    // names no request: every request still unanswered is sent again (same request_id: the
    // server applies a repeated id once and answers it with the original outcome).
    this._emit("untyped", frame);
    for (const id of [...this._pending.keys()]) this._retry(id, null);
  }

  _retry(id, retryAfterMs) {
    const entry = this._pending.get(id);
    if (!entry || entry.retryTimer !== null) return entry !== undefined;
    const o = this.options;
    if (entry.attempts >= o.retryAttempts) return false;
    const wait = typeof retryAfterMs === "number"
      ? retryAfterMs + backoffMs(0, o.retryBaseMs, o.retryBaseMs, this.random)
      : backoffMs(entry.attempts, o.retryBaseMs, o.retryMaxMs, this.random);
    if (this.now() + wait >= entry.giveUpAt) return false;
    entry.attempts++;
    entry.retryTimer = this.timers.set(() => {
      entry.retryTimer = null;
      if (this._pending.get(id) === entry) this._write(entry.frame);
    }, wait);
    return true;
  }

  _settle(id, error, event) {
    const entry = this._pending.get(id);
    if (!entry) return;
    this._pending.delete(id);
    this.timers.clear(entry.timer);
    if (entry.retryTimer !== null) this.timers.clear(entry.retryTimer);
    if (error) entry.reject(error);
    else entry.resolve(event);
  }

  _rejectAll(code) {
    for (const id of [...this._pending.keys()]) this._settle(id, new ProtocolError(code));
  }

  _emit(name, ...args) {
    for (const fn of this._listeners[name] || []) {
      try { fn(...args); } catch (err) { setTimeout(() => { throw err; }, 0); }
    }
  }
}
