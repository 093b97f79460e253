// Wordle Tournament web client: the public protocol (shared/protocol/asyncapi.json) through the
// reference client library (shared/protocol/client/wordle-client.js, served at /client/), plain
// DOM. State lives in S; render() builds the screen from it and patches it into the page
// (morph below): elements that stay keep their identity, so focus, the pressed button under the
// pointer, scroll and running animations survive every server message. Timers tick separately.
// An ES module: what the browser tests call is put on window.
import { WordleClient, webStorage } from "./client/wordle-client.js";

const LS = { token: "wt.token", ui: "wt.ui", cb: "wt.cb", lang: "wt.lang" };
const INVALID_GUESS = new Set(["wrong_length", "not_in_word_list", "invalid_letters"]);
const RECONNECT_WINDOW_MS = 60000;  // protocol guide: a disconnected player has 60 s to resume
const TURNS_EACH = 6;               // rules: 6 turns each, a draw after 12 rows
const LOW_TIME_MS = 10000;

const S = {
  replaced: false,
  ui: pickUiLanguage(localStorage.getItem(LS.ui), navigator.languages || [navigator.language]),
  me: null,
  gameLang: localStorage.getItem(LS.lang) || "en",
  screen: "home",            // home | lobby | tournament | end
  lobby: null, party: null,
  alphabet: [], keyboard: [],
  names: {},                 // player id -> nickname
  tournamentId: null, round: null, introUntil: 0,
  standings: [],             // Standing[]
  duels: {},                 // duel id -> {duel_id, players, length, rows, next_player, deadline_ms, over, result, winner, word}
  myDuel: null, view: null,  // duel ids: mine this round, and the one on screen
  lastDuel: null,            // my previous duel, over: kept on screen until the next intro ends
  history: [],               // my rounds: {round, opponent, result, word} | {round, bye: true}
  input: [], guessIds: new Set(), shake: false,
  eliminated: false, eliminatedReason: null, rating: null, end: null, byeRound: null,
  leftTournament: null,      // a tournament this page left: its late messages are ignored
  notice: null,              // a lasting explanation on the home screen (e.g. out after 60 s away)
  pendingInvite: new URLSearchParams(location.search).get("invite"),
  leavingParty: false,       // this page sent party_leave: its "left" needs no explanation
};

const $ = (sel) => document.querySelector(sel);
const t = (key, params) => translate(S.ui, key, params);

// ---- rendering toolkit: h() builds elements, morph() patches them into the page ---------------
// Handlers are kept on the element (el._on) and called by one delegated listener per event type,
// so morph() can hand the new handlers to the element already on the page.

const EVENTS = ["click", "change", "input", "mousedown", "focusin"];

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) (el._on || (el._on = {}))[k.slice(2)] = v;
    else if (k === "class") el.className = v;
    else if (k === "key") el.setAttribute("data-key", v);
    else if (k === "value") { el.value = v; el.setAttribute("value", v); }
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

for (const type of EVENTS) {
  document.addEventListener(type, (e) => {
    for (let n = e.target; n && n !== document; n = n.parentNode) {
      if (n._on && n._on[type]) { n._on[type](e); return; }
    }
  });
}

const keyOf = (n) => (n.nodeType === 1 ? n.getAttribute("data-key") || n.id || null : null);
const sameKind = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName && keyOf(a) === keyOf(b);

function morphChildren(oldParent, newParent) {
  const next = [...newParent.childNodes];
  next.forEach((n, i) => {
    let o = oldParent.childNodes[i];
    const k = keyOf(n);
    if (k && (!o || keyOf(o) !== k)) {  // a keyed element moved: bring the old one here
      const found = [...oldParent.children].find((c) => keyOf(c) === k && c.nodeName === n.nodeName);
      if (found && found !== o) { oldParent.insertBefore(found, o || null); o = found; }
    }
    if (!o) oldParent.appendChild(n);
    else if (sameKind(o, n)) morphNode(o, n);
    else oldParent.replaceChild(n, o);
  });
  while (oldParent.childNodes.length > next.length) oldParent.lastChild.remove();
}

function morphNode(o, n) {
  if (o.nodeType !== 1) {
    if (o.nodeValue !== n.nodeValue) o.nodeValue = n.nodeValue;
    return;
  }
  for (const { name } of [...o.attributes]) if (!n.hasAttribute(name)) o.removeAttribute(name);
  for (const { name, value } of [...n.attributes]) if (o.getAttribute(name) !== value) o.setAttribute(name, value);
  o._on = n._on;
  if (o.nodeName === "INPUT" && o !== document.activeElement && o.value !== n.value) o.value = n.value;
  morphChildren(o, n);
  if (o.nodeName === "SELECT" && o.value !== n.value) o.value = n.value;
  if (o.nodeName === "DIALOG" || o.nodeName === "DETAILS") o.open = n.open;
}

// ---- connection ------------------------------------------------------------------------------
// The library keeps the connection (shared/protocol/client/README.md): `session` with the stored
// token at every connect, a `ping` whenever nothing was sent for PING_MS (API Gateway counts only
// messages as activity, closes a connection idle for 10 minutes and every one at 2 hours), a
// socket silent for SILENT_PINGS pings (at least 4 s) abandoned as dead (a half-open TCP
// connection), reconnects with backoff, batches unfolded (one redraw per WebSocket message), the
// clock offset from the pongs. S.ws, S.open, S.ready, S.connects, S.heardAt, S.lostAt, S.retryAt
// read the library's state. Nothing but `session` and `ping` is sent before the session reply
// (S.ready): Join and the other buttons are enabled only then.

const PING_MS = window.WT_PING_MS || 20000;  // WT_PING_MS: tests only
const SILENT_PINGS = 3;

function wsUrl() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
}

const client = new WordleClient({
  url: wsUrl(),
  storage: webStorage(localStorage, LS.token),
  heartbeatMs: PING_MS,
  silenceMs: Math.max(SILENT_PINGS * PING_MS, 4000),
});
for (const [key, read] of Object.entries({
  ws: () => client.socket,
  open: () => client.state === "open" || client.state === "session",
  ready: () => client.state === "session",
  connects: () => client.connects,
  heardAt: () => client.heardAt,
  lostAt: () => client.lostAt,
  retryAt: () => client.retryAt,
})) Object.defineProperty(S, key, { get: read, enumerable: true });

client.on("state", (state, detail) => {
  if (state === "connecting") setStatus(S.lostAt ? null : t("connecting"));
  else if (state === "closed" && detail.reason === "replaced") { S.replaced = true; setStatus(t("replaced")); render(); }
  else if (state === "reconnecting") render();
});
client.on("event", handle);
client.on("frame", () => render());

// back online: try at once instead of waiting out the back-off
window.addEventListener("online", () => client.reconnectNow());

function send(msg, options) {
  if (!S.ready) { flash(t("offline_short"), 2500); return null; }
  return client.send(msg, options);
}

const serverNow = () => client.serverNow();
// what the browser tests call (an ES module's names are not globals)
Object.assign(window, { S, t, serverNow, render, handle });

// ---- events ----------------------------------------------------------------------------------

const HANDLERS = {
  session(m) {
    S.pendingGuess = null;
    setStatus("");
    // tokens rotate (ruling 11): the library stores every reply's token in place of the old one
    setMe(m.player);
    if (m.resumed && m.snapshot) applySnapshot(m.snapshot);
    else if (S.screen !== "home") {  // no snapshot: nothing of the old screen holds
      const view = isView(S.screen) ? S.screen : null;
      resetToHome();
      if (view) { S.screen = view; P.back = "home"; }  // a profile, board or replay stays open
    }
    if (isView(S.screen) && P.stale) loadView();  // opened before the session was ready
    if (S.pendingInvite) {
      client.send({ action: "party_join", invite: S.pendingInvite });
      S.pendingInvite = null;
      history.replaceState(null, "", location.pathname);
    }
  },
  player(m) { setMe(m.player); },
  lobby(m) { applyLobby(m); },
  party(m) { applyParty(m); },
  round(m) { applyRound(m); },
  standings(m) { applyStandings(m.players); },
  duel_start(m) {
    const d = duel(m.duel_id, m.players, m.length);
    d.next_player = m.next_player; setDeadline(d, m.deadline_ms);
    if (m.players.includes(meId())) { S.myDuel = m.duel_id; S.view = m.duel_id; S.input = []; }
    else if (!S.view) S.view = m.duel_id;
  },
  turn(m) {
    if (S.pendingGuess && m.row && m.row.player === meId()) S.pendingGuess = null;
    const d = S.duels[m.duel_id];
    if (!d) return;
    if (d.rows.length < m.turn) d.rows.push({ ...m.row, fresh: true });
    d.next_player = m.next_player; setDeadline(d, m.deadline_ms);
    if (m.row.player === meId()) S.input = [];
  },
  duel_end(m) {
    const d = S.duels[m.duel_id];
    if (!d) return;
    Object.assign(d, { over: true, result: m.result, winner: m.winner, word: m.display || m.word,
      next_player: null, deadline_ms: null, reason: m.reason });
    for (const b of m.spectating || []) applyBoard(b);
    if (m.duel_id === S.myDuel) {
      const text = duelResult(d, true);
      announce(text);
      flash(text, 4000);
      recordHistory(d);
      S.lastDuel = d;  // the final board stays (with its result) until the next intro is over
    }
  },
  eliminated(m) {
    const st = S.standings.find((s) => s.player_id === m.player_id);
    if (st) { st.eliminated = true; st.left = m.reason !== "lives"; st.lives = m.reason === "lives" ? 0 : st.lives; }
    if (m.player_id === meId()) {
      S.eliminated = true; S.eliminatedReason = m.reason;
      const text = outText();
      announce(text);
      flash(text, 5000);
    }
  },
  rating(m) {
    S.rating = m;
    if (S.me) S.me.rating = m.rating;
    if (S.notice && S.notice.tournament === m.tournament_id) S.notice.rating = m;
  },
  tournament_end(m) {
    S.end = m;
    applyStandings(m.places);
    // a resume's snapshot repeats the end: a replay (or profile) on screen stays open, and
    // returns to the end screen
    if (isView(S.screen)) P.back = "end";
    else S.screen = "end";
    announce(`${t("tournament_over")}. ${t("winner", { names: m.winners.map(name).join(", ") })}`);
  },
  player_status(m) {
    const st = S.standings.find((s) => s.player_id === m.player_id);
    if (st) st.connected = m.status === "connected";
  },
  error(m) {
    if (S.pendingGuess && S.pendingGuess.id === m.request_id) S.pendingGuess = null;
    if (m.code === "session_replaced") { S.replaced = true; }
    // the library resumes on a new connection (session_bound) or starts a new player with a
    // tokenless session (invalid_token): nothing to show
    if (m.code === "session_bound" || m.code === "invalid_token") return;
    if (S.guessIds.has(m.request_id) && INVALID_GUESS.has(m.code)) shakeRow();
    const d = S.duels[S.myDuel];
    const key = "err." + m.code;
    const text = STRINGS.en[key] ? t(key, { n: d ? d.length : "" }) : t("err.generic", { code: m.code });
    flash(text, 2500);
  },
};

function handle(m) {
  // messages of a tournament this page left (the leaver hears nothing more of it but its rating)
  if (S.leftTournament && m.tournament_id === S.leftTournament && m.type !== "rating") return;
  const fn = HANDLERS[m.type];
  if (fn) fn(m);
}

function setMe(player) {
  S.me = { ...player };
  S.names[player.id] = player.nickname;
}

const meId = () => (S.me ? S.me.id : null);

function setDeadline(d, deadline) {
  if (deadline && deadline !== d.deadline_ms) d.turnStart = serverNow();
  d.deadline_ms = deadline;
}

function applyLobby(m) {
  if (m.status === "left" && S.screen !== "lobby") return;
  S.lobby = m;
  if (m.alphabet && m.alphabet.length) { S.alphabet = m.alphabet; S.keyboard = m.keyboard; }
  for (const p of m.players) S.names[p.id] = p.nickname;
  if (m.status === "waiting") { S.screen = "lobby"; S.end = null; S.rating = null; S.notice = null; }
  else if (m.status === "started") { startTournament(m.tournament_id); }
  else if (m.status === "left") { S.screen = "home"; S.lobby = null; }
}

function startTournament(id) {
  if (S.tournamentId === id && (S.screen === "tournament" || S.screen === "end")) return;
  Object.assign(S, { tournamentId: id, screen: "tournament", duels: {}, myDuel: null, view: null,
    eliminated: false, eliminatedReason: null, rating: null, end: null, round: null, input: [],
    standings: [], lastDuel: null, history: [], leftTournament: null, notice: null });
}

function resetToHome() {
  Object.assign(S, { screen: "home", lobby: null, round: null, duels: {}, myDuel: null, view: null,
    lastDuel: null, input: [], eliminated: false, tournamentId: null });
}

function applyParty(m) {
  // out without asking (removed by the leader, or away past the reconnect window): say so
  if (m.status === "left" && S.party && !S.leavingParty) flash(t("party_out"), 4000);
  S.leavingParty = false;
  S.party = m.status === "left" ? null : m;
  for (const p of m.members || []) S.names[p.id] = p.nickname;
}

function applyRound(m) {
  if (S.tournamentId !== m.tournament_id) startTournament(m.tournament_id);
  S.screen = "tournament";
  const prev = S.duels[S.myDuel];
  if (!S.round || S.round.round < m.round) S.lastDuel = prev && prev.over ? prev : null;
  S.round = m;
  S.introUntil = m.intro_deadline_ms;
  S.duels = {};
  S.myDuel = null;
  S.view = null;
  S.input = [];
  S.byeRound = m.bye === meId() ? m.round : null;
  if (S.byeRound && !S.history.some((x) => x.round === m.round)) S.history.push({ round: m.round, bye: true });
  for (const p of m.pairs) {
    duel(p.duel_id, p.players, null);
    if (p.players.includes(meId())) { S.myDuel = p.duel_id; S.view = p.duel_id; }
  }
  if (!S.view && m.pairs.length) S.view = m.pairs[0].duel_id;
  applyStandings(m.standings);
}

function applyStandings(list) {
  S.standings = list.map((s) => ({ ...s }));
  for (const s of list) S.names[s.player_id] = s.nickname;
}

function duel(id, players, length) {
  let d = S.duels[id];
  if (!d) {
    d = { duel_id: id, players, length, rows: [], next_player: null, deadline_ms: null, over: false };
    S.duels[id] = d;
  }
  if (length) d.length = length;
  return d;
}

function applyBoard(b) {
  const d = duel(b.duel_id, b.players, b.length);
  Object.assign(d, { rows: b.rows.map((r) => ({ ...r })), next_player: b.next_player,
    over: b.over, result: b.result, winner: b.winner, word: b.display || b.word });
  setDeadline(d, b.deadline_ms);
  return d;
}

function applySnapshot(snap) {
  // Each part reads like the latest message of its kind: the screen is redrawn from it alone.
  S.lobby = null; S.round = null; S.duels = {}; S.myDuel = null; S.view = null; S.input = [];
  // the game language first: a reload mid-tournament has no lobby message to take it from
  if (snap.language) { S.alphabet = snap.language.alphabet; S.keyboard = snap.language.keyboard; }
  S.party = null;
  if (snap.party) applyParty(snap.party);
  if (snap.lobby) applyLobby(snap.lobby);
  if (snap.round) applyRound(snap.round);
  if (snap.standings) applyStandings(snap.standings.players);
  for (const st of snap.statuses || []) HANDLERS.player_status(st);
  for (const b of [snap.duel, ...(snap.spectating || [])].filter(Boolean)) applyBoard(b);
  if (snap.duel && snap.duel.players.includes(meId())) { S.myDuel = snap.duel.duel_id; S.view = S.myDuel; }
  if (S.view && !S.duels[S.view]) S.view = Object.keys(S.duels)[0] || null;
  const mine = S.standings.find((s) => s.player_id === meId());
  if (mine && mine.eliminated) S.eliminated = true;
  if (snap.eliminated && snap.eliminated.player_id === meId()) {
    S.eliminated = true; S.eliminatedReason = snap.eliminated.reason;
  }
  if (snap.rating) HANDLERS.rating(snap.rating);
  if (snap.tournament_end) { HANDLERS.tournament_end(snap.tournament_end); return; }
  if (!snap.lobby && !snap.round) {
    if (snap.eliminated && snap.eliminated.player_id === meId() && S.leftTournament !== snap.eliminated.tournament_id) {
      // out of a tournament this page did not leave: say why (e.g. away for more than 60 s)
      S.notice = { reason: snap.eliminated.reason, tournament: snap.eliminated.tournament_id, rating: snap.rating || null };
    }
    if (S.screen === "lobby" || S.screen === "tournament") resetToHome();
  }
}

function recordHistory(d) {
  if (!S.round || S.history.some((x) => x.duel === d.duel_id)) return;
  S.history.push({ round: S.round.round, duel: d.duel_id, opponent: d.players.find((p) => p !== meId()),
    result: d.result === "draw" ? "draw" : d.winner === meId() ? "won" : "lost", word: (d.word || "").toUpperCase() });
}

// ---- input -----------------------------------------------------------------------------------

function introRunning() { return S.screen === "tournament" && S.round && serverNow() < S.introUntil; }

function myTurn() {
  const d = S.duels[S.myDuel];
  return !!(S.ready && d && !d.over && d.next_player === meId() && S.view === S.myDuel && !introRunning());
}

function typeTile(tile) {
  const d = S.duels[S.myDuel];
  if (!myTurn() || !d) return;
  const last = S.input[S.input.length - 1];
  // Uzbek digraph tiles (sh, ch, oʻ, gʻ) typed one character at a time merge into one tile.
  if (last && S.alphabet.includes(last + tile) && tile.length === 1) {
    S.input[S.input.length - 1] = last + tile;
  } else if (S.input.length < d.length) {
    S.input.push(tile);
  }
  render();
}

function backspace() {
  if (!myTurn()) return;
  S.input.pop();
  render();
}

function shakeRow() {
  S.shake = true; render();
  setTimeout(() => { S.shake = false; render(); }, 500);
}

function submit() {
  const d = S.duels[S.myDuel];
  if (!myTurn() || !d) return;
  if (S.input.length !== d.length) {
    flash(t("err.wrong_length", { n: d.length }), 2000);
    shakeRow();
    return;
  }
  const id = send({ action: "guess", duel_id: d.duel_id, word: S.input.join("") }, { deadlineMs: d.deadline_ms });
  if (id) { S.guessIds.add(id); S.pendingGuess = { id, at: Date.now() }; }
}

// A guess answered by neither its `turn` nor an `error` within GUESS_ANSWER_MS went into a dead
// socket (one that has not noticed yet): say so and resume on a new one, whose snapshot tells
// whether the guess landed. Never a guess silently dropped.
const GUESS_ANSWER_MS = 8000;
function checkPendingGuess() {
  const p = S.pendingGuess;
  if (!p || Date.now() - p.at < GUESS_ANSWER_MS) return;
  S.pendingGuess = null;
  if (!S.open) return;
  flash(t("guess_no_answer"), 4000);
  client.abandon("guess_no_answer");
}

const CONTROLS = ["INPUT", "SELECT", "TEXTAREA", "BUTTON", "A", "SUMMARY"];

function physicalKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if ($("#nick-dialog").open) return;
  if (e.key === "Tab" && trapFocus(e)) return;
  if (S.screen === "replay" && replayKey(e)) return;
  const el = document.activeElement;
  const onControl = el && CONTROLS.includes(el.tagName);
  // Enter or Space on a focused button presses that button (the browser does it), never a guess;
  // letters typed while a button has focus still type (the on-screen keys are buttons too).
  if (onControl && (e.key === "Enter" || e.key === " ")) return;
  if (el && ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) return;
  if (e.key === "Enter") { if (myTurn()) { e.preventDefault(); submit(); } return; }
  if (e.key === "Backspace") { if (myTurn()) { e.preventDefault(); backspace(); } return; }
  const tile = keyToTile(e.key);
  if (tile) { e.preventDefault(); typeTile(tile); }
}

function trapFocus(e) {
  const overlay = $(".overlay");
  if (!overlay) return false;
  const items = [...overlay.querySelectorAll("button, [tabindex]")];
  const i = items.indexOf(document.activeElement);
  const next = items[(i + (e.shiftKey ? -1 : 1) + items.length) % items.length];
  e.preventDefault();
  if (next) next.focus();
  return true;
}

function keyToTile(key) {
  if (!key || [...key].length !== 1) return null;
  let c = key.toLocaleLowerCase();
  if ("'‘’`´ʹ′ʻʼ".includes(c)) {
    const last = S.input[S.input.length - 1];
    c = last === "o" || last === "g" ? "ʻ" : "ʼ";
    return c;
  }
  if (S.alphabet.includes(c)) return c;
  if (S.alphabet.some((a) => a.length > 1 && a.startsWith(c))) return c;  // first half of a digraph
  const bare = c.normalize("NFD").replace(/[\u0300-\u036f]/g, "");
  if (S.alphabet.includes(bare)) return bare;
  if (c === "ё" && S.alphabet.includes("е") && !S.alphabet.includes("ё")) return "е";
  return null;
}

// ---- announcements, toasts, status -----------------------------------------------------------

let statusText = "";
function setStatus(text) { if (text !== null) statusText = text; }

let flashTimer = null;
function flash(text, ms) {
  const el = $("#message");
  el.textContent = text;
  el.classList.add("show");
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => { el.classList.remove("show"); el.textContent = ""; }, ms || 2500);
}

// One polite live region that stays in the page: a new text is always announced, the same text
// again too (cleared first).
function announce(text) {
  const el = $("#announce");
  el.textContent = "";
  setTimeout(() => { el.textContent = text; }, 60);
}

let announced = { turn: null, low: null };
function announceTurn() {
  const d = S.duels[S.myDuel];
  const key = d && myTurn() ? `${d.duel_id}:${d.rows.length}` : null;
  if (key && key !== announced.turn) {
    announced.turn = key;
    announce(`${t("your_turn")} · ${turnText(d)}`);
  }
  if (key && d.deadline_ms && d.deadline_ms - serverNow() < LOW_TIME_MS && announced.low !== key) {
    announced.low = key;
    announce(t("low_time", { s: Math.ceil((d.deadline_ms - serverNow()) / 1000) }));
  }
}

// ---- screens ---------------------------------------------------------------------------------

function updateHeader() {
  document.documentElement.lang = S.ui;
  document.documentElement.dir = UI_LANGUAGES[S.ui].dir;
  document.title = t("title");
  if ($("#ui-lang").value !== S.ui) $("#ui-lang").value = S.ui;
  $("#title").textContent = t("title");
  $("#ui-lang-label").textContent = t("ui_language");
  $("#cb-label").textContent = t("colour_blind");
  $("#nick-btn").textContent = S.me ? S.me.nickname : "…";
  $("#nick-btn").disabled = !S.ready;
  $("#nick-btn").setAttribute("aria-label", `${t("nickname")}: ${S.me ? S.me.nickname : ""} (${t("change")})`);
  $("#rating").textContent = S.me ? t("rating", { r: S.me.rating }) : "";
  $("#nick-title").textContent = t("nickname");
  $("#nick-cancel").textContent = t("cancel");
  $("#nick-save").textContent = t("save");
}

function name(id) {
  if (id === meId()) return `${S.names[id] || "?"} (${t("you")})`;
  return S.names[id] || "?";
}

// A nickname is never trusted to be short or left-to-right: shown as an element, it is a <bdi>
// (its own direction) truncated with an ellipsis by CSS (.nick); inside a sentence, it is cut to
// 16 characters and wrapped in FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE.
const nick = (id) => h("bdi", { class: "nick", title: S.names[id] || "?" }, name(id));
function nickText(id) {
  const chars = Array.from(name(id));
  return "\u2068" + (chars.length > 16 ? chars.slice(0, 15).join("") + "…" : chars.join("")) + "\u2069";
}

function render() {
  updateHeader();
  const screen = { home: renderHome, lobby: renderLobby, tournament: renderTournament, end: renderEnd,
    ...VIEWS }[S.screen];
  // the game took the screen back (a lobby, a round): the address no longer names a view
  if (!isView(S.screen) && location.hash) history.replaceState(null, "", location.pathname + location.search);
  morphChildren($("#status"), h("div", {}, renderStatus()));
  const hadOverlay = !!$(".overlay");
  morphChildren($("#app"), h("main", {}, screen()));
  const overlay = $(".overlay");
  if (overlay && !hadOverlay) {
    S.focusBeforeIntro = document.activeElement;
    overlay.querySelector(".card").focus();
  } else if (!overlay && hadOverlay && (!document.activeElement || document.activeElement === document.body)) {
    const back = S.focusBeforeIntro;
    ((back && back.isConnected) ? back : $("#app")).focus({ preventScroll: true });
  }
  document.body.classList.toggle("playing", !!$(".keyboard"));
  tick();
}

function renderStatus() {
  if (S.replaced) return h("div", { class: "offline" }, t("replaced"));
  if (S.ready || !S.lostAt) return statusText ? h("div", {}, statusText) : null;
  const inGame = S.screen === "lobby" || (S.screen === "tournament" && !S.eliminated);
  return h("div", { class: "offline", key: "offline" },
    h("strong", {}, t("offline_title")), " ",
    h("span", { "data-retry": "1", "aria-hidden": "true" }, ""), " ",
    inGame ? h("span", { "data-window": "1" }, t("window_left", { s: windowLeft() })) : null);
}

function languageSelect(id) {
  return h("select", { id, value: S.gameLang, onchange: (e) => { S.gameLang = e.target.value; localStorage.setItem(LS.lang, S.gameLang); } },
    GAME_LANGUAGES.map(([code, label]) => h("option", { value: code, selected: code === S.gameLang, lang: code }, label)));
}

function renderNotice() {
  const n = S.notice;
  if (!n) return null;
  return h("section", { class: "card notice", key: "notice", role: "status" },
    h("p", {}, outText(n.reason, true)),
    n.rating ? h("p", {}, ratingLine(n.rating)) : null,
    h("button", { type: "button", onclick: () => { S.notice = null; render(); } }, t("dismiss")));
}

function renderHome() {
  const p = S.party;
  const member = p && p.leader !== meId();
  return [renderNav(), renderNotice(), h("section", { class: "card", key: "home" },
    h("p", {}, t("intro")),
    member ? null : h("label", { class: "field" }, t("game_language"), languageSelect("game-lang")),
    p ? null : h("button", { class: "primary", id: "join", type: "button", disabled: !S.ready,
      onclick: () => send({ action: "join", language: S.gameLang }) }, t("play")),
  ), renderParty()];
}

function renderParty() {
  const p = S.party;
  if (!p) {
    return h("section", { class: "card", key: "party" }, h("h2", {}, t("party")),
      h("button", { id: "party-create", type: "button", disabled: !S.ready, onclick: () => send({ action: "party_create" }) }, t("party_create")));
  }
  const link = `${location.origin}${location.pathname}?invite=${encodeURIComponent(p.invite || "")}`;
  const leader = p.leader === meId();
  return h("section", { class: "card", key: "party", "aria-labelledby": "party-h" },
    h("h2", { id: "party-h" }, t("party")),
    h("label", { class: "field" }, t("party_invite"),
      h("div", { class: "invite" },
        h("input", { id: "invite-link", readonly: true, value: link, onfocusin: (e) => e.target.select() }),
        h("button", { type: "button", onclick: () => copy(link) }, t("copy")))),
    leader ? h("div", { class: "row" },
      h("button", { type: "button", id: "party-reset-invite", "aria-describedby": "party-reset-hint",
        onclick: () => send({ action: "party_reset_invite" }) }, t("party_reset_invite")),
      h("span", { class: "muted", id: "party-reset-hint" }, t("party_reset_invite_hint"))) : null,
    h("ul", { class: "plain" }, p.members.map((m) => h("li", { key: "pm-" + m.id },
      nick(m.id), h("span", { class: "muted" }, m.id === p.leader ? t("party_leader") : m.rating),
      leader && m.id !== meId() && p.status === "open"
        ? h("button", { type: "button", class: "party-remove", "aria-label": t("party_remove_label", { name: name(m.id) }),
            onclick: () => send({ action: "party_remove", player_id: m.id }) }, t("party_remove"))
        : null))),
    h("div", { class: "row", style: "margin-top:.5rem" },
      leader
        ? (S.screen === "home" ? h("button", { class: "primary", id: "party-start", type: "button", disabled: !S.ready,
            onclick: () => send({ action: "party_start", language: S.gameLang }) }, t("party_start")) : null)
        : h("span", { class: "muted" }, t("party_waiting_leader")),
      h("button", { type: "button", id: "party-leave", onclick: () => { S.leavingParty = true; send({ action: "party_leave" }); } }, t("party_leave"))),
  );
}

function copy(text) {
  (navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject())
    .then(() => flash(t("copied"), 1500))
    .catch(() => { const el = $("#invite-link"); if (el) { el.select(); document.execCommand("copy"); } });
}

function renderLobby() {
  const l = S.lobby;
  return [h("section", { class: "card", key: "lobby", "aria-labelledby": "lobby-h" },
    h("h2", { id: "lobby-h" }, `${t("lobby")} · ${langName(l.language)}`),
    h("p", { class: "big", "aria-live": "polite" }, t("lobby_waiting", { n: l.players.length, seats: l.seats })),
    h("ul", { class: "plain" }, l.players.map((p) => h("li", { key: "lp-" + p.id }, nick(p.id), h("span", { class: "muted" }, p.rating)))),
    h("p", { class: "muted" }, t("lobby_note")),
    h("button", { id: "leave", type: "button", onclick: () => send({ action: "leave" }) }, t("leave"))),
    S.party ? renderParty() : null];
}

const langName = (code) => (GAME_LANGUAGES.find(([c]) => c === code) || [code, code])[1];

function renderTournament() {
  const out = [];
  const r = S.round;
  const intro = r && introRunning();
  if (intro) out.push(renderIntro(r));
  const mine = S.duels[S.myDuel];
  const banners = [];
  if (S.rating) banners.push(h("div", { class: "banner", key: "b-rating" }, ratingLine(S.rating)));
  else if (S.eliminated) banners.push(h("div", { class: "banner", key: "b-out" }, outText()));
  if (r && S.byeRound === r.round) banners.push(h("div", { class: "banner", key: "b-bye" }, t("you_bye")));

  // during the next round's intro, the last duel's final board (with its result) stays on screen
  const shown = intro && S.lastDuel ? S.lastDuel : S.duels[S.view];
  const card = h("section", { class: "card", key: "duel", "aria-labelledby": "round-h" },
    h("div", { class: "duel-head" },
      h("h2", { id: "round-h" }, r ? t("round", { n: r.round }) : t("title")),
      h("button", { class: "danger", id: "leave", type: "button", onclick: leaveTournament }, t("leave"))),
    banners, intro ? null : renderTabs(), renderDuel(shown));
  out.push(card);
  if (mine && S.view === S.myDuel && !mine.over && !S.eliminated) out.push(renderKeyboard(mine));
  out.push(renderStandings());
  out.push(renderHistory());
  return out;
}

function leaveTournament() {
  const inPlay = S.screen === "tournament" && !S.eliminated;
  if (inPlay && !confirm(t("leave_confirm"))) return;
  if (!send({ action: "leave" })) return;
  // The leaver gets nothing more of this tournament (but its rating): home at once, no live board.
  S.leftTournament = S.tournamentId;
  S.notice = inPlay ? { reason: "left", tournament: S.tournamentId, rating: null } : null;
  resetToHome();
  render();
  const join = $("#join");
  if (join) join.focus();
}

function ratingLine(m) {
  const change = (m.change > 0 ? "+" : "") + m.change;
  return h("span", {}, t("place_rating", { place: m.place, change, rating: m.rating }));
}

function outText(reason, past) {
  const r = reason || S.eliminatedReason || "lives";
  const why = t(r === "timeout" ? "out_timeout" : r === "left" ? "out_left" : "out_lives");
  if (past || S.rating || r !== "lives") return why;
  return `${why} ${t("out_place_later")}`;
}

function duelResult(d, mine) {
  const word = (d.word || "").toUpperCase();
  if (mine) {
    if (d.reason === "timeout" && d.winner === meId()) return `${t("duel_won")} ${t("opponent_timeout")}`;
    return t(d.result === "draw" ? "duel_draw" : d.winner === meId() ? "duel_won" : "duel_lost", { word });
  }
  return d.result === "draw" ? t("duel_drawn", { word }) : t("duel_over", { winner: nickText(d.winner), word });
}

function renderIntro(r) {
  const last = S.lastDuel;
  return h("div", { class: "overlay", key: "intro" },
    h("section", { class: "card", role: "dialog", "aria-modal": "true", "aria-labelledby": "intro-h", tabindex: "-1" },
      h("h2", { id: "intro-h", class: "big" }, t("round", { n: r.round })),
      h("p", { class: "timer intro-timer", "data-deadline": r.intro_deadline_ms, "data-format": "intro" }, ""),
      last ? h("p", { class: "banner last-result" }, duelResult(last, true)) : null,
      h("ul", { class: "plain pairs" }, r.pairs.map((p) => {
        const own = p.players.includes(meId());
        return h("li", { key: "pair-" + p.duel_id, class: own ? "mine" : null },
          own ? h("span", { class: "sr-only" }, t("your_duel") + ": ") : null,
          h("span", { class: "duellist" }, nick(p.players[0]), " ", h("span", { class: "hearts" }, hearts(livesOf(p.players[0])))),
          h("span", { class: "vs" }, t("vs")),
          h("span", { class: "duellist" }, nick(p.players[1]), " ", h("span", { class: "hearts" }, hearts(livesOf(p.players[1])))));
      })),
      r.bye ? h("p", { class: "muted" }, t("bye", { name: nickText(r.bye) })) : null));
}

function renderTabs() {
  const ids = Object.keys(S.duels);
  if (ids.length < 2 && S.view === S.myDuel) return null;
  ids.sort((x, y) => (y === S.myDuel) - (x === S.myDuel));  // your own duel first
  return h("div", { class: "tabs", role: "group", "aria-label": t("other_duels") }, ids.map((id) => {
    const d = S.duels[id];
    const label = id === S.myDuel ? t("your_duel") : d.players.map(nickText).join(" – ");
    return h("button", { key: "tab-" + id, type: "button", "aria-pressed": String(id === S.view),
      onclick: () => { S.view = id; render(); } }, label + (d.over ? " ✓" : ""));
  }));
}

const livesOf = (id) => { const s = S.standings.find((x) => x.player_id === id); return s ? s.lives : 0; };

function turnText(d) {
  const player = d.next_player || meId();
  const n = Math.min(TURNS_EACH, d.rows.filter((r) => r.player === player).length + 1);
  return t("turn_of", { n, of: TURNS_EACH });
}

function renderDuel(d) {
  if (!d) return h("p", { class: "muted" }, S.round ? t("waiting_round") : "");
  const mine = d.players.includes(meId());
  const [a, b] = mine ? [meId(), d.players.find((p) => p !== meId())] : d.players;
  const who = (id) => h("span", { class: "duellist" }, nick(id), " ",
    h("span", { class: "hearts", role: "img", "aria-label": t("lives", { n: livesOf(id) }) }, hearts(livesOf(id))));
  const live = !d.over && d.deadline_ms && !introRunning();
  const parts = [h("div", { class: "duel-head", key: "head-" + d.duel_id },
    h("span", { class: "who" }, mine ? [who(a), ` ${t("vs")} `, who(b)] : [t("watching_short"), " ", who(a), ` ${t("vs")} `, who(b)]),
    live ? h("span", { class: "timer", "data-deadline": d.deadline_ms, role: "timer" }, "") : null)];
  if (live) {
    parts.push(h("div", { class: "progress", "aria-hidden": "true" },
      h("div", { class: "bar", "data-bar": d.deadline_ms, "data-start": d.turnStart || serverNow() })));
  }
  if (d.over) {
    parts.push(h("div", { class: "banner result " + (mine ? d.result === "draw" ? "draw" : d.winner === meId() ? "won" : "lost" : ""),
      role: "status", key: "result-" + d.duel_id }, duelResult(d, mine)));
  } else if (d.next_player && !introRunning()) {
    const turn = d.next_player === meId();
    const offline = turn && !S.ready;
    parts.push(h("p", { class: "turn-note" + (turn && !offline ? " mine" : "") + (offline ? " paused" : "") },
      offline ? t("offline_turn") : turn ? t("your_turn") : t("their_turn", { name: nickText(d.next_player) }),
      h("span", { class: "turn-count" }, ` · ${turnText(d)}`)));
  }
  parts.push(renderBoard(d, mine));
  parts.push(h("p", { class: "muted small draw-hint" }, t("draw_hint")));
  return parts;
}

function renderBoard(d, mine) {
  const len = d.length || 5;
  const winRow = d.over && d.result === "win" && d.reason === "solved" ? d.rows.length - 1 : -1;
  const rows = d.rows.map((row, n) => {
    const me = row.player === meId();
    const tag = h("bdi", { class: "tag", title: name(row.player) }, Array.from(S.names[row.player] || "?").slice(0, 4).join(""));
    const cls = "brow" + (me ? " me" : "") + (row.fresh ? " reveal" : "") + (n === winRow ? " win" : "");
    if (row.skipped) {
      return h("div", { class: cls, role: "row", key: `r-${d.duel_id}-${n}` }, tag,
        h("div", { class: "tile skip", role: "cell", style: `width:calc(${len} * var(--tile) + ${len - 1} * var(--gap))` }, t("skipped")));
    }
    return h("div", { class: cls, role: "row", key: `r-${d.duel_id}-${n}` }, tag,
      row.tiles.map((l, i) => h("div", { class: `tile ${row.marks[i]}`, role: "cell", style: `--i:${i}`,
        "aria-label": t("tile_" + row.marks[i], { l: l.toUpperCase() }) }, l)));
  });
  if (mine && !d.over && d.next_player === meId() && !introRunning()) {
    const cells = [];
    for (let i = 0; i < len; i++) {
      const l = S.input[i];
      cells.push(h("div", { class: "tile" + (l ? " filled" : ""), role: "cell" }, l || ""));
    }
    rows.push(h("div", { class: "brow input me" + (S.shake ? " shake" : ""), role: "row", key: "input-" + d.duel_id,
      "aria-label": S.input.join("") }, h("span", { class: "tag" }, t("you").slice(0, 4)), cells));
  }
  return h("div", { class: "board", role: "grid", "aria-label": t("board"), dir: "ltr", key: "board-" + d.duel_id }, rows);
}

function letterStates(d) {
  const rank = { absent: 1, present: 2, correct: 3 };
  const states = {};
  for (const row of d.rows) {
    if (row.skipped || !row.tiles) continue;
    row.tiles.forEach((l, i) => {
      const m = row.marks[i];
      if (!states[l] || rank[m] > rank[states[l]]) states[l] = m;
    });
  }
  return states;
}

const noFocusSteal = (e) => e.preventDefault();  // a mouse or touch press leaves focus where it was

function renderKeyboard(d) {
  const states = letterStates(d);
  const enabled = myTurn();
  const rows = (S.keyboard.length ? S.keyboard : [S.alphabet]).map((row, i, all) => {
    const keys = row.map((l) => h("button", { class: "key " + (states[l] || ""), type: "button", disabled: !enabled,
      key: "k-" + l, "aria-label": states[l] ? t("tile_" + states[l], { l: l.toUpperCase() }) : l.toUpperCase(),
      onmousedown: noFocusSteal, onclick: () => typeTile(l) }, l));
    if (i === all.length - 1) {
      keys.unshift(h("button", { class: "key wide", type: "button", id: "enter", disabled: !enabled,
        onmousedown: noFocusSteal, onclick: submit }, t("enter")));
      keys.push(h("button", { class: "key wide", type: "button", id: "backspace", disabled: !enabled,
        onmousedown: noFocusSteal, onclick: backspace, "aria-label": t("backspace") }, "⌫"));
    }
    return h("div", { class: "krow", key: "krow-" + i }, keys);
  });
  return h("div", { class: "keyboard" + (enabled ? "" : " idle"), key: "keyboard", role: "group",
    "aria-label": t("keyboard"), dir: "ltr" }, rows);
}

function hearts(n) { return "♥".repeat(Math.max(0, n)) + "♡".repeat(Math.max(0, 3 - n)); }

function standingOrder(x, y) {
  // alive players first, most lives first; then the eliminated by place; then by name
  return (x.eliminated - y.eliminated) || (x.eliminated ? 0 : y.lives - x.lives)
    || ((x.place || 99) - (y.place || 99)) || x.nickname.localeCompare(y.nickname);
}

function renderStandings(final) {
  const list = [...S.standings].sort(standingOrder);
  return h("section", { class: "card", key: "standings", "aria-labelledby": "st-h" },
    h("h2", { id: "st-h" }, final ? t("final_standings") : t("standings")),
    h("table", { class: "standings" },
      h("thead", {}, h("tr", {}, h("th", {}, t("place")), h("th", {}, t("player")), h("th", {}, t("lives_col")),
        h("th", {}, t("change_col")))),
      h("tbody", {}, list.map((s) => {
        const status = s.left ? t("left") : s.eliminated ? t("out") : !s.connected ? t("disconnected") : "";
        const ch = s.rating_change;
        return h("tr", { key: "st-" + s.player_id, class: (s.player_id === meId() ? "me " : "") + (s.eliminated ? "out" : "") },
          h("td", {}, s.place || ""),
          h("td", {}, nick(s.player_id)),
          h("td", {}, h("span", { class: "hearts", role: "img", "aria-label": t("lives", { n: s.lives }) }, hearts(s.lives)),
            status ? h("span", { class: "muted" }, " " + status) : null),
          h("td", { class: ch > 0 ? "pos" : ch < 0 ? "neg" : "" }, ch === null || ch === undefined ? "" : (ch > 0 ? "+" : "") + ch));
      }))));
}

function renderHistory() {
  if (!S.history.length) return null;
  return h("section", { class: "card", key: "history", "aria-labelledby": "hist-h" },
    h("h2", { id: "hist-h" }, t("history")),
    h("ol", { class: "plain history" }, S.history.map((x) => h("li", { key: "h-" + x.round },
      h("span", {}, t("round", { n: x.round })),
      h("span", {}, x.bye ? t("bye_short") : [`${t("vs")} `, nick(x.opponent), `: ${t("res_" + x.result)} · ${x.word}`])))));
}

function renderEnd() {
  const e = S.end;
  const winners = (e ? e.winners : []).map(nickText).join(", ");
  return [renderNav(), h("section", { class: "card", key: "end" },
    h("h2", { class: "big", id: "end-h" }, t("tournament_over")),
    h("p", { class: "big" }, t("winner", { names: winners })),
    S.rating ? h("p", { class: "banner" }, ratingLine(S.rating)) : null,
    e ? h("p", {}, h("a", { id: "replay-link", href: "#replay/" + encodeURIComponent(e.tournament_id),
      onclick: (ev) => { ev.preventDefault(); go("#replay/" + encodeURIComponent(e.tournament_id)); } },
      t("replay_open"))) : null,
    h("div", { class: "row" },
      S.party ? null : h("button", { class: "primary", id: "again", type: "button", disabled: !S.ready,
        onclick: () => send({ action: "join", language: S.lobby ? S.lobby.language : S.gameLang }) }, t("play_again")),
      h("button", { type: "button", id: "home", onclick: () => { S.screen = "home"; render(); const j = $("#join"); if (j) j.focus(); } }, t("home")))),
  renderStandings(true), renderHistory()];
}

const windowLeft = () => Math.max(0, Math.ceil((S.lostAt + RECONNECT_WINDOW_MS - Date.now()) / 1000));

// ---- progression: profile, leaderboards, tournament history, replays (issue 38) ---------------
// Four read-only requests (profile, leaderboard, history, replay) through the library's
// request(): its reply resolves, an `error` rejects with the code. Each view has an address
// (#profile/<id>, #leaderboard/rating, #leaderboard/weekly/<lang>/<current|previous>,
// #history/<id>, #replay/<tournament id>), so the phone's back button and links work; the game
// takes the screen back when a lobby or a round arrives. History is written off the play path
// (eventually): a replay opened at once may not exist yet, so a missing one is asked again a few
// times before `not_found` is shown.

const P = {
  back: "home",              // the game screen a view returns to
  stale: false,              // the view's data must be (re)loaded when the session is ready
  loading: false, error: null, seq: 0,
  profile: null, profileId: null, tableShown: false,
  board: "rating", boardLang: null, boardWeek: "current", leaderboard: null,
  games: null, gamesId: null, gamesCursor: null, gamesMore: false,
  replay: null, replayId: null, pos: { r: 0, d: 0, n: 0 }, replayTries: 0,
};
const REPLAY_TRIES = 12;       // a record not written yet: asked again this many times...
const REPLAY_RETRY_MS = 1500;  // ...this far apart
const SVG_NS = "http://www.w3.org/2000/svg";
const VIEW_NAMES = ["profile", "leaderboard", "history", "replay"];
const isView = (screen) => VIEW_NAMES.includes(screen);
Object.assign(window, { P });

// An SVG element (h() makes HTML ones): attributes only, children flattened like h().
function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    el.setAttribute(k === "key" ? "data-key" : k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Open a view by its address (`#profile`, ...; "" returns to the game screen): a new entry in
 * the browser's history, so Back returns. */
function go(hash) {
  if (hash !== location.hash) history.pushState(null, "", hash || location.pathname + location.search);
  route();
}
window.addEventListener("popstate", route);
window.addEventListener("hashchange", route);

function route() {
  const [view, ...args] = location.hash.replace(/^#\/?/, "").split("/").map((x) => {
    try { return decodeURIComponent(x); } catch { return ""; }
  });
  if (!isView(view)) {
    if (isView(S.screen)) S.screen = P.back;
    render();
    if (!isView(S.screen)) { const main = $("#app"); if (main) main.focus({ preventScroll: true }); }
    return;
  }
  if (!isView(S.screen)) P.back = S.screen;
  S.screen = view;
  if (view === "profile") P.profileId = args[0] || null;
  else if (view === "history") { P.gamesId = args[0] || null; }
  else if (view === "replay") { P.replayId = args[0] || null; P.replayTries = 0; }
  else if (view === "leaderboard") {
    P.board = args[0] === "weekly" ? "weekly" : "rating";
    // weekly: the language asked for, else the last one shown, else the last game's
    P.boardLang = args[1] || P.boardLang || (S.lobby && S.lobby.language) || S.gameLang;
    P.boardWeek = args[2] === "previous" ? "previous" : "current";
  }
  loadView();
  const main = $("#app");
  if (main) main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
}

/** Ask the server for the open view's data (one request; a newer one supersedes it). */
function loadView(more = false) {
  const view = S.screen;
  const seq = ++P.seq;
  let message;
  if (view === "profile") {
    message = { action: "profile", ...(P.profileId ? { player_id: P.profileId } : {}) };
  } else if (view === "leaderboard") {
    message = P.board === "weekly"
      ? { action: "leaderboard", board: "weekly", language: P.boardLang, week: P.boardWeek }
      : { action: "leaderboard", board: "rating" };
  } else if (view === "history") {
    message = { action: "history", limit: 20, ...(P.gamesId ? { player_id: P.gamesId } : {}),
      ...(more && P.gamesCursor ? { cursor: P.gamesCursor } : {}) };
  } else if (view === "replay") {
    message = { action: "replay", tournament_id: P.replayId || "" };
  } else return;
  if (!more) clearView(view);
  P.loading = true; P.error = null;
  if (!S.ready) { P.stale = true; render(); return; }
  P.stale = false;
  render();
  client.request(message).then((reply) => {
    if (seq !== P.seq) return;
    P.loading = false;
    applyView(view, reply, more);
    render();
  }, (err) => {
    if (seq !== P.seq) return;
    const code = (err && err.code) || "generic";
    if (view === "replay" && code === "not_found" && ++P.replayTries < REPLAY_TRIES) {
      // the record is written off the play path: it may be a moment behind the end screen
      P.error = "pending"; render();
      setTimeout(() => { if (seq === P.seq && S.screen === "replay") loadView(); }, REPLAY_RETRY_MS);
      return;
    }
    P.loading = false;
    P.error = code;
    if (code === "not_connected" || code === "connection_lost") P.stale = true;
    render();
  });
}

function clearView(view) {
  if (view === "profile") P.profile = null;
  else if (view === "leaderboard") P.leaderboard = null;
  else if (view === "history") { P.games = null; P.gamesCursor = null; P.gamesMore = false; }
  else if (view === "replay" && (!P.replay || P.replay.tournament_id !== P.replayId)) {
    P.replay = null; P.pos = { r: 0, d: 0, n: 0 };
  }
}

function applyView(view, reply, more) {
  if (view === "profile") P.profile = reply.player;
  else if (view === "leaderboard") P.leaderboard = reply;
  else if (view === "history") {
    P.games = more && P.games ? P.games.concat(reply.tournaments) : reply.tournaments;
    P.gamesCursor = reply.next_cursor || null;
    P.gamesMore = !!reply.next_cursor;
  } else if (view === "replay") {
    if (!P.replay || P.replay.tournament_id !== reply.record.tournament_id) P.pos = { r: 0, d: 0, n: 0 };
    P.replay = reply.record;
  }
}

function viewError() {
  if (!P.error) return P.loading ? h("p", { class: "muted", role: "status", key: "loading" }, t("loading")) : null;
  if (P.error === "pending") return h("p", { class: "muted", role: "status", key: "pending" }, t("replay_pending"));
  const offline = ["not_connected", "connection_lost", "timeout", "closed"].includes(P.error);
  const key = "err." + P.error;
  const text = offline ? t("offline_short") : STRINGS.en[key] ? t(key) : t("err.generic", { code: P.error });
  return h("div", { class: "banner notice", role: "alert", key: "view-error" }, h("p", {}, text),
    h("button", { type: "button", id: "view-retry", onclick: () => loadView() }, t("retry")));
}

function renderNav() {
  const items = [
    ["", "nav_play", S.screen === "end" ? "end" : "home"],
    ["#profile", "nav_profile", "profile"],
    ["#leaderboard/rating", "nav_boards", "leaderboard"],
    ["#history", "nav_games", "history"],
  ];
  return h("nav", { class: "tabs nav", key: "nav", "aria-label": t("nav_label") }, items.map(([hash, label, screen]) =>
    h("button", { type: "button", key: "nav-" + label, id: "nav-" + screen,
      "aria-current": S.screen === screen ? "page" : null, onclick: () => go(hash) }, t(label))));
}

// A nickname in a view: the one the reply carries (not S.names); "(you)" on the player's own.
function nickAs(id, nickname) {
  const text = id === meId() ? `${nickname} (${t("you")})` : nickname;
  return h("bdi", { class: "nick", title: nickname }, text);
}

function profileLink(id, nickname) {
  return h("button", { type: "button", class: "link", onclick: () => go("#profile/" + encodeURIComponent(id)) },
    nickAs(id, nickname));
}

const signed = (n) => (n > 0 ? "+" : "") + n;
const dateText = (ms, opts) => new Intl.DateTimeFormat(S.ui, opts || { dateStyle: "medium", timeZone: "UTC" }).format(new Date(ms));
const changeCell = (n) => h("td", { class: n > 0 ? "pos" : n < 0 ? "neg" : "" }, signed(n));

function refreshButton() {
  return h("button", { type: "button", id: "view-refresh", disabled: !S.ready || P.loading, onclick: () => loadView() }, t("refresh"));
}

// -- profile

function renderProfile() {
  const p = P.profile;
  const out = [renderNav()];
  const head = h("section", { class: "card", key: "profile", "aria-labelledby": "profile-h" },
    h("h2", { id: "profile-h" }, t("profile"), p ? [": ", nickAs(p.player_id, p.nickname)] : null),
    viewError(),
    p ? h("dl", { class: "stats" },
      [["stat_rating", p.rating], ["stat_tournaments", p.tournaments], ["stat_wins", p.wins],
        ["stat_podiums", p.podiums],
        ["stat_avg_place", p.average_place == null ? t("none") : p.average_place.toFixed(2)],
        ["stat_best", p.best_rating == null ? t("none") : p.best_rating]].map(([k, v]) =>
        h("div", { key: "stat-" + k }, h("dt", {}, t(k)), h("dd", { "data-stat": k }, v)))) : null,
    h("div", { class: "row" }, refreshButton(),
      p ? h("button", { type: "button", id: "profile-history", onclick: () => go("#history/" + encodeURIComponent(p.player_id)) }, t("view_history")) : null));
  out.push(head);
  if (!p) return out;
  out.push(renderRatingHistory(p.rating_history || []));
  if (p.languages && p.languages.length) {
    out.push(h("section", { class: "card", key: "languages", "aria-labelledby": "langs-h" },
      h("h2", { id: "langs-h" }, t("by_language")),
      h("table", { class: "standings" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("col_language")), h("th", { scope: "col" }, t("col_tournaments")),
          h("th", { scope: "col" }, t("stat_avg_place")))),
        h("tbody", {}, p.languages.map((l) => h("tr", { key: "lang-" + l.language },
          h("td", {}, langName(l.language)), h("td", {}, l.tournaments),
          h("td", {}, l.average_place == null ? t("none") : l.average_place.toFixed(2))))))));
  }
  return out;
}

function renderRatingHistory(points) {
  const body = [];
  if (!points.length) body.push(h("p", { class: "muted", id: "chart-empty" }, t("chart_empty")));
  else {
    body.push(ratingChart(points));
    body.push(h("button", { type: "button", id: "chart-table-toggle", "aria-expanded": String(P.tableShown),
      "aria-controls": "rating-table", onclick: () => { P.tableShown = !P.tableShown; render(); } },
      t(P.tableShown ? "hide_table" : "show_table")));
    // the chart's text alternative: always in the page for screen readers, shown on request
    body.push(h("div", { class: P.tableShown ? "table-wrap" : "sr-only", key: "rating-table-wrap" },
      h("table", { class: "standings", id: "rating-table" },
        h("caption", {}, t("rating_history")),
        h("thead", {}, h("tr", {}, ["col_date", "col_language", "place", "col_before", "col_after", "col_change"].map((k) =>
          h("th", { scope: "col" }, t(k))))),
        h("tbody", {}, [...points].reverse().map((x) => h("tr", { key: "pt-" + x.tournament_id },
          h("td", {}, dateText(x.ended_ms)), h("td", {}, langName(x.language)), h("td", {}, x.place),
          h("td", {}, x.rating_before), h("td", {}, x.rating_after), changeCell(x.rating_after - x.rating_before)))))));
  }
  return h("section", { class: "card", key: "rating-history", "aria-labelledby": "rh-h" },
    h("h2", { id: "rh-h" }, t("rating_history")), body);
}

/** The rating over the player's tournaments, oldest first: a line through the rating before the
 * first one and after each; y axis in rating points with three labelled ticks, x axis the
 * tournaments in order with the first and last dates. Drawn in a 320 x 200 box scaled to the
 * card's width (a 360 px phone draws it at about 1:1, so 12-unit text stays readable). */
function ratingChart(points) {
  const W = 320, H = 200, L = 52, R = 14, T = 14, B = 44;
  const values = [points[0].rating_before, ...points.map((x) => x.rating_after)];
  let lo = Math.min(...values), hi = Math.max(...values);
  if (hi - lo < 40) { const mid = (hi + lo) / 2; lo = mid - 20; hi = mid + 20; }
  lo = Math.floor(lo / 10) * 10; hi = Math.ceil(hi / 10) * 10;
  const x = (i) => L + (W - L - R) * (values.length === 1 ? 0.5 : i / (values.length - 1));
  const y = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  const ticks = [lo, Math.round((lo + hi) / 2), hi];
  const last = values.length - 1;
  const short = { month: "short", day: "numeric", timeZone: "UTC" };
  const label = t("chart_label", { n: points.length, from: values[0], to: values[last] });
  return svg("svg", { class: "chart", id: "rating-chart", viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": label, preserveAspectRatio: "xMidYMid meet", dir: "ltr" },
    ticks.map((v) => [
      svg("line", { class: "grid", x1: L, x2: W - R, y1: y(v), y2: y(v), key: "grid-" + v }),
      svg("text", { class: "tick", x: L - 6, y: y(v) + 4, "text-anchor": "end", key: "tick-" + v }, v)]),
    svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }),
    svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }),
    svg("text", { class: "tick", x: x(1), y: H - B + 16, "text-anchor": points.length === 1 ? "end" : "start" },
      dateText(points[0].ended_ms, short)),
    points.length > 1 ? svg("text", { class: "tick", x: x(last), y: H - B + 16, "text-anchor": "end" },
      dateText(points[points.length - 1].ended_ms, short)) : null,
    svg("text", { class: "axis-title", x: L + (W - L - R) / 2, y: H - 6, "text-anchor": "middle" }, t("chart_axis_tournaments")),
    svg("text", { class: "axis-title", x: 12, y: T + (H - T - B) / 2, "text-anchor": "middle",
      transform: `rotate(-90 12 ${T + (H - T - B) / 2})` }, t("chart_axis_rating")),
    svg("polyline", { class: "line", points: values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ") }),
    values.map((v, i) => svg("circle", { class: i === last ? "point last" : "point", cx: x(i).toFixed(1), cy: y(v).toFixed(1),
      r: i === last ? 5 : 3, key: "pt-" + i, "data-rating": v },
      svg("title", {}, i === 0 ? String(v) : `${dateText(points[i - 1].ended_ms)}: ${values[i - 1]} → ${v}`))));
}

// -- leaderboards

function renderLeaderboard() {
  const lb = P.leaderboard;
  const weekly = P.board === "weekly";
  const lang = P.boardLang || S.gameLang;
  const scoreCol = t(weekly ? "col_score_points" : "col_score_rating");
  const out = [renderNav()];
  const controls = [h("div", { class: "tabs", role: "group", "aria-label": t("boards") },
    h("button", { type: "button", id: "board-rating", "aria-pressed": String(!weekly), onclick: () => go("#leaderboard/rating") }, t("board_rating")),
    h("button", { type: "button", id: "board-weekly", "aria-pressed": String(weekly),
      onclick: () => go(`#leaderboard/weekly/${lang}/${P.boardWeek}`) }, t("board_weekly")))];
  if (weekly) {
    controls.push(h("div", { class: "row" },
      h("label", { class: "field" }, t("game_language"),
        h("select", { id: "board-lang", value: lang, onchange: (e) => go(`#leaderboard/weekly/${e.target.value}/${P.boardWeek}`) },
          GAME_LANGUAGES.map(([code, label]) => h("option", { value: code, selected: code === lang, lang: code }, label)))),
      h("div", { class: "tabs", role: "group", "aria-label": t("board_weekly") }, ["current", "previous"].map((w) =>
        h("button", { type: "button", id: "week-" + w, "aria-pressed": String(P.boardWeek === w),
          onclick: () => go(`#leaderboard/weekly/${lang}/${w}`) }, t("week_" + w))))));
  }
  const card = h("section", { class: "card", key: "leaderboard", "aria-labelledby": "lb-h" },
    h("h2", { id: "lb-h" }, t("boards")), controls, viewError(),
    lb ? [
      lb.week ? h("p", { class: "muted", id: "board-week", "data-week": lb.week },
        t("week_of", { date: dateText(Date.parse(lb.week + "T00:00:00Z")) })) : null,
      h("p", { class: "banner", id: "board-me" }, meLine(lb, weekly)),
      // "around you" first: on a phone the top 100 is long, and your own place is the question
      !weekly && lb.around && lb.around.length ? [h("h3", { id: "around-h" }, t("around_you")),
        boardTable("board-around", "around-h", lb.around, scoreCol)] : null,
      h("h3", { id: "top-h" }, t("top_100")),
      lb.entries.length ? boardTable("board-top", "top-h", lb.entries, scoreCol)
        : h("p", { class: "muted" }, t("board_empty")),
    ] : null,
    h("div", { class: "row" }, refreshButton()));
  out.push(card);
  return out;
}

function meLine(lb, weekly) {
  const me = lb.me;
  if (!me) return t("not_ranked");
  if (me.rank == null) return t("your_points_unranked", { score: me.score });
  return t(weekly ? "your_rank_points" : "your_rank", { rank: me.rank, score: me.score });
}

function boardTable(id, labelledby, entries, scoreCol) {
  return h("table", { class: "standings leaderboard", id, "aria-labelledby": labelledby },
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("col_rank")), h("th", { scope: "col" }, t("player")),
      h("th", { scope: "col" }, scoreCol))),
    h("tbody", {}, entries.map((e) => {
      const mine = e.player_id === meId();
      return h("tr", { key: `${id}-${e.player_id}`, class: mine ? "me" : null, "aria-current": mine ? "true" : null,
        "data-player": e.player_id },
        h("td", {}, e.rank), h("td", {}, profileLink(e.player_id, e.nickname)), h("td", {}, e.score));
    })));
}

// -- tournament history

function renderGames() {
  const list = P.games;
  const out = [renderNav()];
  out.push(h("section", { class: "card", key: "games", "aria-labelledby": "games-h" },
    h("h2", { id: "games-h" }, t("games")),
    list && !list.length ? h("p", { class: "muted" }, t("games_empty")) : null,
    list ? h("ol", { class: "plain games", id: "games" }, list.map((g) => h("li", { key: "g-" + g.tournament_id, class: "game" },
      h("div", { class: "game-main" },
        h("strong", {}, t("place_of", { place: g.place, n: g.players })),
        h("span", { class: "muted" }, ` · ${dateText(g.ended_ms)} · ${langName(g.language)}`),
        h("div", {}, `${t("stat_rating")} ${g.rating_before} → ${g.rating_after} `,
          h("span", { class: g.rating_after > g.rating_before ? "pos" : g.rating_after < g.rating_before ? "neg" : "" },
            `(${signed(g.rating_after - g.rating_before)})`)),
        (g.opponents || []).length ? h("div", { class: "muted small" }, t("opponents"), " ",
          (g.opponents || []).map((o, i) => [i ? ", " : "", nickAs(o.player_id, o.nickname)])) : null),
      h("a", { href: "#replay/" + encodeURIComponent(g.tournament_id), class: "replay-link",
        onclick: (e) => { e.preventDefault(); go("#replay/" + encodeURIComponent(g.tournament_id)); } }, t("replay")))))
      : null,
    viewError(),
    h("div", { class: "row" }, refreshButton(),
      P.gamesMore ? h("button", { type: "button", id: "games-more", disabled: P.loading || !S.ready,
        onclick: () => loadView(true) }, t("more")) : null)));
  return out;
}

// -- replay: rounds -> duels -> rows

function replayDuel() {
  const rec = P.replay;
  const round = rec && rec.rounds[P.pos.r];
  return { round, duel: round ? round.duels[P.pos.d] : null };
}

/** Move in the replay: `row` +-1 steps a row (into the next or previous duel and round at the
 * ends), `duel` +-1 a duel, `round` +-1 a round; `to` "start" | "end" of the duel. */
function step(kind, delta, to) {
  const rec = P.replay;
  if (!rec || !rec.rounds.length) return;
  const pos = { ...P.pos };
  const duelsOf = (r) => rec.rounds[r].duels.length;
  const rowsOf = (r, d) => (rec.rounds[r].duels[d] ? rec.rounds[r].duels[d].rows.length : 0);
  if (to) pos.n = to === "end" ? rowsOf(pos.r, pos.d) : 0;
  else if (kind === "round") {
    pos.r = Math.max(0, Math.min(rec.rounds.length - 1, pos.r + delta)); pos.d = 0; pos.n = 0;
  } else if (kind === "duel") {
    pos.d += delta; pos.n = 0;
    if (pos.d >= duelsOf(pos.r)) { if (pos.r + 1 < rec.rounds.length) { pos.r++; pos.d = 0; } else pos.d = duelsOf(pos.r) - 1; }
    if (pos.d < 0) { if (pos.r > 0) { pos.r--; pos.d = Math.max(0, duelsOf(pos.r) - 1); } else pos.d = 0; }
  } else {
    pos.n += delta;
    if (pos.n > rowsOf(pos.r, pos.d)) {
      const next = pos.d + 1 < duelsOf(pos.r) ? [pos.r, pos.d + 1] : pos.r + 1 < rec.rounds.length ? [pos.r + 1, 0] : null;
      if (next) [pos.r, pos.d, pos.n] = [...next, 0]; else pos.n = rowsOf(pos.r, pos.d);
    } else if (pos.n < 0) {
      const prev = pos.d > 0 ? [pos.r, pos.d - 1] : pos.r > 0 ? [pos.r - 1, Math.max(0, duelsOf(pos.r - 1) - 1)] : null;
      if (prev) [pos.r, pos.d, pos.n] = [...prev, rowsOf(...prev)]; else pos.n = 0;
    }
  }
  pos.d = Math.max(0, Math.min(pos.d, Math.max(0, duelsOf(pos.r) - 1)));
  P.pos = pos;
  render();
}

const REPLAY_KEYS = { ArrowRight: ["row", 1], ArrowLeft: ["row", -1], ArrowDown: ["duel", 1], ArrowUp: ["duel", -1],
  PageDown: ["round", 1], PageUp: ["round", -1], Home: ["row", 0, "start"], End: ["row", 0, "end"] };

/** The replay's keys (see REPLAY_KEYS; left and right swap on a right-to-left page); true when
 * the key was one of them. Keys typed into a field or a select are theirs. */
function replayKey(e) {
  const el = document.activeElement;
  if (el && ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName)) return false;
  let key = e.key;
  if (document.documentElement.dir === "rtl" && (key === "ArrowLeft" || key === "ArrowRight")) {
    key = key === "ArrowLeft" ? "ArrowRight" : "ArrowLeft";
  }
  const move = REPLAY_KEYS[key];
  if (!move || !P.replay) return false;
  e.preventDefault();
  step(...move);
  return true;
}

function exportRecord() {
  const rec = P.replay;
  if (!rec) return;
  const blob = new Blob([JSON.stringify(rec, null, 2) + "\n"], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: `wordle-tournament-${rec.tournament_id}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function replayResult(duel, nickOf) {
  if (duel.result === "draw") return t("replay_draw");
  const winner = nickOf(duel.winner);
  return t({ left: "replay_won_left", timeout: "replay_won_timeout" }[duel.reason] || "replay_won", { winner });
}

function renderReplay() {
  const rec = P.replay;
  const out = [renderNav()];
  const names = {};
  for (const p of rec ? rec.players : []) names[p.player_id] = p.nickname;
  const nickOf = (id) => "\u2068" + (names[id] || "?") + "\u2069";
  out.push(h("section", { class: "card", key: "replay", "aria-labelledby": "replay-h" },
    h("h2", { id: "replay-h" }, t("replay"),
      rec ? h("span", { class: "muted" }, ` · ${dateText(rec.ended_ms)} · ${langName(rec.language)}`) : null),
    viewError(),
    rec ? [
      h("table", { class: "standings", id: "replay-places" },
        h("caption", { class: "sr-only" }, t("final_standings")),
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("place")), h("th", { scope: "col" }, t("player")),
          h("th", { scope: "col" }, t("change_col")))),
        h("tbody", {}, rec.players.map((p) => h("tr", { key: "rp-" + p.player_id, class: p.player_id === meId() ? "me" : null },
          h("td", {}, p.place), h("td", {}, profileLink(p.player_id, p.nickname)),
          h("td", { class: p.rating_change > 0 ? "pos" : p.rating_change < 0 ? "neg" : "" },
            `${signed(p.rating_change)} → ${p.rating_after}`))))),
      h("div", { class: "row" },
        h("button", { type: "button", id: "export-json", onclick: exportRecord }, t("export_json")))] : null));
  if (rec && rec.rounds.length) out.push(renderReplayBoard(rec, names, nickOf));
  return out;
}

function renderReplayBoard(rec, names, nickOf) {
  const { round, duel } = replayDuel();
  const n = P.pos.n;
  const nav = (id, kind, delta, label, disabled, aria) => h("button", { type: "button", id, disabled: disabled || null,
    "aria-label": aria || null, onclick: () => step(kind, delta) }, label);
  const first = P.pos.r === 0, lastRound = P.pos.r === rec.rounds.length - 1;
  const rows = duel ? duel.rows.slice(0, n) : [];
  const len = duel ? duel.length : 5;
  return h("section", { class: "card replay-view", key: "replay-view", "aria-labelledby": "rp-round" },
    h("div", { class: "duel-head" },
      nav("rp-prev-round", "round", -1, "‹", first, t("prev_round")),
      h("h2", { id: "rp-round" }, t("round_of", { n: round.round_no, of: rec.rounds.length })),
      nav("rp-next-round", "round", 1, "›", lastRound, t("next_round"))),
    round.bye ? h("p", { class: "muted" }, t("bye", { name: nickOf(round.bye) })) : null,
    round.duels.length > 1 ? h("div", { class: "tabs", role: "group", "aria-label": t("duels") }, round.duels.map((d, i) =>
      h("button", { type: "button", key: "rd-" + d.duel_id, "aria-pressed": String(i === P.pos.d),
        onclick: () => { P.pos = { r: P.pos.r, d: i, n: 0 }; render(); } }, d.players.map((id) => names[id] || "?").join(" – ")))) : null,
    duel ? [
      h("p", { class: "who", id: "rp-duel" }, nickAs(duel.players[0], names[duel.players[0]] || "?"), ` ${t("vs")} `,
        nickAs(duel.players[1], names[duel.players[1]] || "?")),
      h("p", { class: "banner", id: "rp-secret" }, t("secret", { word: duel.word.toUpperCase() }), " · ", replayResult(duel, nickOf)),
      h("div", { class: "board", role: "grid", "aria-label": t("board"), dir: "ltr", key: "rp-board-" + duel.duel_id },
        rows.map((row, i) => {
          const tag = h("bdi", { class: "tag", title: names[row.player_id] || "?" },
            Array.from(names[row.player_id] || "?").slice(0, 4).join(""));
          const cls = "brow" + (row.player_id === meId() ? " me" : "") + (i === n - 1 ? " current" : "");
          if (row.skipped) {
            return h("div", { class: cls, role: "row", key: `rp-${duel.duel_id}-${i}` }, tag,
              h("div", { class: "tile skip", role: "cell", style: `width:calc(${len} * var(--tile) + ${len - 1} * var(--gap))` }, t("skipped")));
          }
          return h("div", { class: cls, role: "row", key: `rp-${duel.duel_id}-${i}` }, tag,
            row.tiles.map((l, j) => h("div", { class: `tile ${row.marks[j]}`, role: "cell",
              "aria-label": t("tile_" + row.marks[j], { l: l.toUpperCase() }) }, l)));
        })),
      h("p", { id: "rp-pos", class: "turn-note", role: "status", "aria-live": "polite" },
        duel.rows.length ? t("row_of", { n, of: duel.rows.length }) : t("no_rows"))] : null,
    h("div", { class: "row replay-steps" },
      nav("rp-prev", "row", -1, t("prev_row")),
      nav("rp-next", "row", 1, t("next_row"))),
    h("div", { class: "row replay-steps" },
      nav("rp-prev-duel", "duel", -1, t("prev_duel")),
      nav("rp-next-duel", "duel", 1, t("next_duel"))),
    h("p", { class: "muted small", id: "rp-keys" }, t("replay_keys")));
}

const VIEWS = { profile: renderProfile, leaderboard: renderLeaderboard, history: renderGames, replay: renderReplay };

// ---- timers ----------------------------------------------------------------------------------

let introShown = false;
function tick() {
  const now = serverNow();
  for (const el of document.querySelectorAll("[data-deadline]")) {
    const left = Math.max(0, Number(el.dataset.deadline) - now);
    const s = Math.ceil(left / 1000);
    el.textContent = el.dataset.format === "intro" ? t("starts_in", { s: t("seconds", { s }) }) : t("seconds", { s });
    el.classList.toggle("low", el.dataset.format !== "intro" && left < LOW_TIME_MS);
  }
  for (const el of document.querySelectorAll("[data-bar]")) {
    const end = Number(el.dataset.bar), start = Number(el.dataset.start);
    const share = Math.max(0, Math.min(1, (end - now) / Math.max(1, end - start)));
    el.style.width = (share * 100).toFixed(1) + "%";
    el.classList.toggle("low", end - now < LOW_TIME_MS);
  }
  const retry = $("[data-retry]");
  if (retry) retry.textContent = t("retry_in", { s: Math.max(0, Math.ceil((S.retryAt - Date.now()) / 1000)) });
  const win = $("[data-window]");
  if (win) win.textContent = t("window_left", { s: windowLeft() });
  checkPendingGuess();
  const intro = introRunning();
  if (introShown !== !!intro && S.screen === "tournament") { introShown = !!intro; render(); return; }
  announceTurn();
}
setInterval(tick, 250);

// ---- header controls -------------------------------------------------------------------------

function setupHeader() {
  const sel = $("#ui-lang");
  for (const [code, info] of Object.entries(UI_LANGUAGES)) {
    sel.append(h("option", { value: code, selected: code === S.ui, lang: code }, info.name));
  }
  sel.addEventListener("change", () => { S.ui = sel.value; localStorage.setItem(LS.ui, S.ui); render(); });
  const cb = $("#cb-toggle");
  cb.checked = localStorage.getItem(LS.cb) === "1";
  document.body.classList.toggle("cb", cb.checked);
  cb.addEventListener("change", () => {
    document.body.classList.toggle("cb", cb.checked);
    localStorage.setItem(LS.cb, cb.checked ? "1" : "0");
  });
  const dlg = $("#nick-dialog");
  $("#nick-btn").addEventListener("click", () => {
    $("#nick-input").value = S.me ? S.me.nickname : "";
    dlg.showModal();
  });
  $("#nick-cancel").addEventListener("click", () => dlg.close());
  $("#nick-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const nickname = $("#nick-input").value.trim();
    if (nickname) send({ action: "nickname", nickname });
    dlg.close();
  });
  document.addEventListener("keydown", physicalKey);
}

setupHeader();
if (isView(location.hash.replace(/^#\/?/, "").split("/")[0])) route();
render();
client.connect();
