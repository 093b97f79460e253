// Wordle Tournament web client: one WebSocket, the public protocol (shared/protocol/asyncapi.json),
// plain DOM. State lives in S; render() redraws <main> from it; timers tick separately.
"use strict";

const LS = { token: "wt.token", ui: "wt.ui", cb: "wt.cb", lang: "wt.lang" };
const INVALID_GUESS = new Set(["wrong_length", "not_in_word_list", "invalid_letters"]);

const S = {
  ws: null, open: false, replaced: false, retries: 0, connects: 0, heardAt: 0,
  ui: pickUiLanguage(localStorage.getItem(LS.ui), navigator.languages || [navigator.language]),
  token: localStorage.getItem(LS.token),
  me: null, offset: 0, pingSent: {},
  gameLang: localStorage.getItem(LS.lang) || "en",
  screen: "home",            // home | lobby | tournament | end
  lobby: null, party: null,
  alphabet: [], keyboard: [],
  names: {},                 // player id -> nickname
  tournamentId: null, round: null, introUntil: 0,
  standings: [],             // Standing[]
  duels: {},                 // duel id -> {duel_id, players, length, rows, next_player, deadline_ms, over, result, winner, word}
  myDuel: null, view: null,  // duel ids: mine this round, and the one on screen
  input: [], guessIds: new Set(), shake: false,
  eliminated: false, rating: null, end: null, byeRound: null,
  pendingInvite: new URLSearchParams(location.search).get("invite"),
};

const $ = (sel) => document.querySelector(sel);
const t = (key, params) => translate(S.ui, key, params);
let seq = 0;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// ---- connection ------------------------------------------------------------------------------
// Liveness (DESIGN.md ruling 14): a `ping` message at least every 20 s (every PING_MS). API
// Gateway counts only messages as activity (the browser's own WebSocket ping frames, if any, are
// invisible to it), closes a connection idle for 10 minutes and every connection at 2 hours
// (1001): whatever closes the socket, onclose reconnects and `session` with the token resumes.
// A socket that hears nothing for SILENT_PINGS pings (no pong) is dead without a close (a
// half-open TCP connection): it is abandoned and a new one resumes.

const PING_MS = window.WT_PING_MS || 15000;  // WT_PING_MS: tests only
const SILENT_PINGS = 3;

function wsUrl() {
  return (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
}

function connect() {
  setStatus(t("connecting"));
  const ws = new WebSocket(wsUrl());
  S.ws = ws;
  ws.onopen = () => {
    S.open = true; S.retries = 0; S.connects++; S.heardAt = Date.now();
    send({ action: "session", token: S.token || undefined });
    ping();
  };
  ws.onmessage = (e) => {
    S.heardAt = Date.now();
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    handle(m);
    render();
  };
  ws.onclose = () => {
    S.open = false;
    if (S.replaced) { setStatus(t("replaced")); return; }
    setStatus(t("offline"));
    const wait = Math.min(1000 * 2 ** S.retries++, 10000);
    setTimeout(connect, wait);
  };
}

function abandon() {
  const ws = S.ws;
  ws.onopen = ws.onmessage = ws.onclose = null;  // its late close must not reconnect twice
  try { ws.close(); } catch { /* already closing */ }
  S.open = false;
  setStatus(t("offline"));
  connect();
}

function send(msg) {
  const request_id = msg.request_id || `${msg.action}-${++seq}`;
  if (!S.ws || S.ws.readyState !== WebSocket.OPEN) return null;
  S.ws.send(JSON.stringify({ ...msg, request_id }));
  return request_id;
}

function ping() {
  const id = send({ action: "ping" });
  if (id) S.pingSent[id] = Date.now();
}
setInterval(() => {
  if (!S.open) return;
  if (Date.now() - S.heardAt > SILENT_PINGS * PING_MS) { abandon(); return; }
  ping();
}, PING_MS);

const serverNow = () => Date.now() + S.offset;

// ---- events ----------------------------------------------------------------------------------

const HANDLERS = {
  session(m) {
    setStatus("");
    if (m.token) { S.token = m.token; localStorage.setItem(LS.token, m.token); }
    setMe(m.player);
    if (m.resumed && m.snapshot) applySnapshot(m.snapshot);
    if (S.pendingInvite) {
      send({ action: "party_join", invite: S.pendingInvite });
      S.pendingInvite = null;
      history.replaceState(null, "", location.pathname);
    }
  },
  player(m) { setMe(m.player); },
  pong(m) {
    const sent = S.pingSent[m.request_id];
    if (sent) { delete S.pingSent[m.request_id]; S.offset = m.server_time_ms - (sent + Date.now()) / 2; }
  },
  lobby(m) { applyLobby(m); },
  party(m) { applyParty(m); },
  round(m) { applyRound(m); },
  standings(m) { applyStandings(m.players); },
  duel_start(m) {
    const d = duel(m.duel_id, m.players, m.length);
    d.next_player = m.next_player; d.deadline_ms = m.deadline_ms;
    if (m.players.includes(meId())) { S.myDuel = m.duel_id; S.view = m.duel_id; S.input = []; }
    else if (!S.view) S.view = m.duel_id;
  },
  turn(m) {
    const d = S.duels[m.duel_id];
    if (!d) return;
    if (d.rows.length < m.turn) d.rows.push(m.row);
    d.next_player = m.next_player; d.deadline_ms = m.deadline_ms;
    if (m.row.player === meId()) S.input = [];
  },
  duel_end(m) {
    const d = S.duels[m.duel_id];
    if (!d) return;
    Object.assign(d, { over: true, result: m.result, winner: m.winner, word: m.display || m.word,
      next_player: null, deadline_ms: null, reason: m.reason });
    if (m.duel_id === S.myDuel) {
      const key = m.result === "draw" ? "duel_draw" : m.winner === meId() ? "duel_won" : "duel_lost";
      flash(t(key, { word: (m.display || m.word).toUpperCase() }), 4000);
      setTimeout(() => { if (S.view === m.duel_id) { S.view = liveDuel() || S.view; render(); } }, 4000);
    }
  },
  eliminated(m) {
    const st = S.standings.find((s) => s.player_id === m.player_id);
    if (st) { st.eliminated = true; st.left = m.reason !== "lives"; st.lives = 0; }
    if (m.player_id === meId()) { S.eliminated = true; flash(t("eliminated_you"), 5000); }
  },
  rating(m) {
    S.rating = m;
    if (S.me) S.me.rating = m.rating;
  },
  tournament_end(m) {
    S.end = m;
    applyStandings(m.places);
    S.screen = "end";
  },
  player_status(m) {
    const st = S.standings.find((s) => s.player_id === m.player_id);
    if (st) st.connected = m.status === "connected";
  },
  error(m) {
    if (m.code === "session_replaced") { S.replaced = true; }
    if (m.code === "invalid_token") {
      S.token = null; localStorage.removeItem(LS.token);
      send({ action: "session" });
      return;
    }
    if (S.guessIds.has(m.request_id) && INVALID_GUESS.has(m.code)) {
      S.shake = true;
      setTimeout(() => { S.shake = false; }, 500);
    }
    const d = S.duels[S.myDuel];
    const key = "err." + m.code;
    const text = STRINGS.en[key] ? t(key, { n: d ? d.length : "" }) : t("err.generic", { code: m.code });
    flash(text, 2500);
  },
};

function handle(m) {
  const fn = HANDLERS[m.type];
  if (fn) fn(m);
}

function setMe(player) {
  S.me = { ...player };
  S.names[player.id] = player.nickname;
  updateHeader();
}

const meId = () => (S.me ? S.me.id : null);

function applyLobby(m) {
  S.lobby = m;
  if (m.alphabet && m.alphabet.length) { S.alphabet = m.alphabet; S.keyboard = m.keyboard; }
  for (const p of m.players) S.names[p.id] = p.nickname;
  if (m.status === "waiting") { S.screen = "lobby"; S.end = null; S.rating = null; }
  else if (m.status === "started") { startTournament(m.tournament_id); }
  else if (m.status === "left" && S.screen === "lobby") { S.screen = "home"; S.lobby = null; }
}

function startTournament(id) {
  if (S.tournamentId === id && S.screen === "tournament") return;
  Object.assign(S, { tournamentId: id, screen: "tournament", duels: {}, myDuel: null, view: null,
    eliminated: false, rating: null, end: null, round: null, input: [], standings: [] });
}

function applyParty(m) {
  S.party = m.status === "left" ? null : m;
  for (const p of m.members || []) S.names[p.id] = p.nickname;
  if (S.party && S.party.invite) S.inviteSeen = true;
}

function applyRound(m) {
  if (S.tournamentId !== m.tournament_id) startTournament(m.tournament_id);
  S.screen = "tournament";
  S.round = m;
  S.introUntil = m.intro_deadline_ms;
  S.duels = {};
  S.myDuel = null;
  S.view = null;
  S.input = [];
  S.byeRound = m.bye === meId() ? m.round : null;
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

function applySnapshot(snap) {
  // the game language first: a reload mid-tournament has no lobby message to take it from
  if (snap.language) { S.alphabet = snap.language.alphabet; S.keyboard = snap.language.keyboard; }
  if (snap.party) applyParty(snap.party);
  if (snap.lobby) applyLobby(snap.lobby);
  if (snap.round) applyRound(snap.round);
  if (snap.standings) applyStandings(snap.standings.players);
  const boards = [snap.duel, ...(snap.spectating || [])].filter(Boolean);
  for (const b of boards) {
    const d = duel(b.duel_id, b.players, b.length);
    Object.assign(d, { rows: b.rows, next_player: b.next_player, deadline_ms: b.deadline_ms,
      over: b.over, result: b.result, winner: b.winner, word: b.word });
  }
  if (snap.duel && snap.duel.players.includes(meId())) { S.myDuel = snap.duel.duel_id; S.view = S.myDuel; }
  const mine = S.standings.find((s) => s.player_id === meId());
  if (mine && mine.eliminated) S.eliminated = true;
  if (snap.eliminated) HANDLERS.eliminated(snap.eliminated);
  if (snap.rating) HANDLERS.rating(snap.rating);
  if (snap.tournament_end) { HANDLERS.tournament_end(snap.tournament_end); return; }
  if (!snap.lobby && !snap.round && (S.screen === "lobby" || S.screen === "tournament")) S.screen = "home";
}

function liveDuel() {
  const live = Object.values(S.duels).find((d) => !d.over && d.length);
  return live ? live.duel_id : null;
}

// ---- input -----------------------------------------------------------------------------------

function myTurn() {
  const d = S.duels[S.myDuel];
  return !!(d && !d.over && d.next_player === meId() && S.view === S.myDuel && serverNow() >= S.introUntil);
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

function submit() {
  const d = S.duels[S.myDuel];
  if (!myTurn() || !d) return;
  if (S.input.length !== d.length) {
    S.shake = true; flash(t("err.wrong_length", { n: d.length }), 2000); render();
    setTimeout(() => { S.shake = false; }, 500);
    return;
  }
  const id = send({ action: "guess", duel_id: d.duel_id, word: S.input.join("") });
  if (id) S.guessIds.add(id);
}

function physicalKey(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (document.activeElement && ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName)) return;
  if ($("#nick-dialog").open) return;
  if (e.key === "Enter") { if (myTurn()) { e.preventDefault(); submit(); } return; }
  if (e.key === "Backspace") { if (myTurn()) { e.preventDefault(); backspace(); } return; }
  const tile = keyToTile(e.key);
  if (tile) { e.preventDefault(); typeTile(tile); }
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

// ---- rendering -------------------------------------------------------------------------------

function setStatus(text) { $("#status").textContent = text; }

let flashTimer = null;
function flash(text, ms) {
  const el = $("#message");
  el.textContent = text;
  el.classList.add("show");
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => el.classList.remove("show"), ms || 2500);
}

function updateHeader() {
  document.documentElement.lang = S.ui;
  document.documentElement.dir = UI_LANGUAGES[S.ui].dir;
  document.title = t("title");
  $("#ui-lang").value = S.ui;
  $("#title").textContent = t("title");
  $("#ui-lang-label").textContent = t("ui_language");
  $("#cb-label").textContent = t("colour_blind");
  $("#nick-btn").textContent = S.me ? S.me.nickname : "…";
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

function render() {
  updateHeader();
  const app = $("#app");
  const view = { home: renderHome, lobby: renderLobby, tournament: renderTournament, end: renderEnd }[S.screen];
  app.replaceChildren(...[view()].flat());
  tick();
}

function languageSelect(id) {
  return h("select", { id, onchange: (e) => { S.gameLang = e.target.value; localStorage.setItem(LS.lang, S.gameLang); } },
    GAME_LANGUAGES.map(([code, label]) => h("option", { value: code, selected: code === S.gameLang }, label)));
}

function renderHome() {
  const out = [h("section", { class: "card" },
    h("p", {}, t("intro")),
    h("label", { class: "field" }, t("game_language"), languageSelect("game-lang")),
    S.party ? null : h("button", { class: "primary", id: "join", disabled: !S.open,
      onclick: () => send({ action: "join", language: S.gameLang }) }, t("play")),
  )];
  out.push(renderParty());
  return out;
}

function renderParty() {
  const p = S.party;
  if (!p) {
    return h("section", { class: "card" }, h("h2", {}, t("party")),
      h("button", { id: "party-create", disabled: !S.open, onclick: () => send({ action: "party_create" }) }, t("party_create")));
  }
  const link = `${location.origin}${location.pathname}?invite=${encodeURIComponent(p.invite || "")}`;
  const leader = p.leader === meId();
  return h("section", { class: "card", "aria-labelledby": "party-h" },
    h("h2", { id: "party-h" }, t("party")),
    h("label", { class: "field" }, t("party_invite"),
      h("div", { class: "invite" },
        h("input", { id: "invite-link", readonly: true, value: link, onfocus: (e) => e.target.select() }),
        h("button", { type: "button", onclick: () => copy(link) }, t("copy")))),
    h("ul", { class: "plain" }, p.members.map((m) => h("li", {},
      h("span", {}, name(m.id)), h("span", { class: "muted" }, m.id === p.leader ? t("party_leader") : m.rating)))),
    h("div", { class: "row", style: "margin-top:.5rem" },
      leader
        ? h("button", { class: "primary", id: "party-start", disabled: !S.open,
            onclick: () => send({ action: "party_start", language: S.gameLang }) }, t("party_start"))
        : h("span", { class: "muted" }, t("party_waiting_leader")),
      h("button", { onclick: () => send({ action: "party_leave" }) }, t("party_leave"))),
  );
}

function copy(text) {
  (navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject())
    .then(() => flash(t("copied"), 1500))
    .catch(() => { const el = $("#invite-link"); if (el) { el.select(); document.execCommand("copy"); } });
}

function renderLobby() {
  const l = S.lobby;
  return [h("section", { class: "card", "aria-labelledby": "lobby-h" },
    h("h2", { id: "lobby-h" }, `${t("lobby")} · ${langName(l.language)}`),
    h("p", { class: "big", "aria-live": "polite" }, t("lobby_waiting", { n: l.players.length, seats: l.seats })),
    h("ul", { class: "plain" }, l.players.map((p) => h("li", {}, h("span", {}, name(p.id)), h("span", { class: "muted" }, p.rating)))),
    h("p", { class: "muted" }, t("lobby_note")),
    h("button", { id: "leave", onclick: () => send({ action: "leave" }) }, t("leave"))),
    S.party ? renderParty() : null];
}

const langName = (code) => (GAME_LANGUAGES.find(([c]) => c === code) || [code, code])[1];

function renderTournament() {
  const out = [];
  const r = S.round;
  if (r && serverNow() < S.introUntil) out.push(renderIntro(r));
  const mine = S.duels[S.myDuel];
  const banners = [];
  if (S.rating) banners.push(h("div", { class: "banner" }, ratingLine(S.rating)));
  else if (S.eliminated) banners.push(h("div", { class: "banner" }, t("eliminated_you")));
  if (r && S.byeRound === r.round) banners.push(h("div", { class: "banner" }, t("you_bye")));

  const card = h("section", { class: "card", "aria-labelledby": "round-h" },
    h("div", { class: "duel-head" },
      h("h2", { id: "round-h" }, r ? t("round", { n: r.round }) : t("title")),
      h("button", { class: "danger", id: "leave", onclick: leaveTournament }, t("leave"))),
    banners, renderTabs(), renderDuel(S.duels[S.view]));
  out.push(card);
  if (mine && S.view === S.myDuel && !mine.over) out.push(renderKeyboard(mine));
  out.push(renderStandings());
  return out;
}

function leaveTournament() {
  const inPlay = S.screen === "tournament" && !S.eliminated;
  if (inPlay && !confirm(t("leave_confirm"))) return;
  send({ action: "leave" });
  if (!inPlay) { S.screen = "home"; render(); }
}

function ratingLine(m) {
  const change = (m.change > 0 ? "+" : "") + m.change;
  return h("span", {}, t("place_rating", { place: m.place, change, rating: m.rating }));
}

function renderIntro(r) {
  return h("div", { class: "overlay", role: "dialog", "aria-modal": "true", "aria-labelledby": "intro-h" },
    h("section", { class: "card" },
      h("h2", { id: "intro-h", class: "big" }, t("round", { n: r.round })),
      h("p", { class: "big timer", "data-deadline": r.intro_deadline_ms, "data-format": "intro" }, ""),
      h("ul", { class: "plain pairs" }, r.pairs.map((p) =>
        h("li", {}, `${name(p.players[0])} ${t("vs")} ${name(p.players[1])}`))),
      r.bye ? h("p", { class: "muted" }, t("bye", { name: name(r.bye) })) : null));
}

function renderTabs() {
  const ids = Object.keys(S.duels);
  if (ids.length < 2 && S.view === S.myDuel) return null;
  ids.sort((x, y) => (y === S.myDuel) - (x === S.myDuel));  // your own duel first
  return h("div", { class: "tabs", role: "group", "aria-label": t("other_duels") }, ids.map((id) => {
    const d = S.duels[id];
    const label = id === S.myDuel ? t("your_duel") : d.players.map((p) => S.names[p] || "?").join(" – ");
    return h("button", { "aria-pressed": String(id === S.view), onclick: () => { S.view = id; render(); } },
      label + (d.over ? " ✓" : ""));
  }));
}

function renderDuel(d) {
  if (!d) return h("p", { class: "muted" }, S.round ? t("waiting_round") : "");
  const mine = d.duel_id === S.myDuel;
  const parts = [];
  const [a, b] = mine ? [meId(), d.players.find((p) => p !== meId())] : d.players;
  parts.push(h("div", { class: "duel-head" },
    h("span", { class: "who" }, mine ? `${name(a)} ${t("vs")} ${name(b)}` : t("watching", { a: name(a), b: name(b) })),
    d.over || !d.deadline_ms ? null : h("span", { class: "timer", "data-deadline": d.deadline_ms, role: "timer" }, "")));
  if (d.over) {
    const word = (d.word || "").toUpperCase();
    let text;
    if (mine) text = t(d.result === "draw" ? "duel_draw" : d.winner === meId() ? "duel_won" : "duel_lost", { word });
    else text = d.result === "draw" ? t("duel_drawn", { word }) : t("duel_over", { winner: name(d.winner), word });
    parts.push(h("div", { class: "banner", role: "status" }, text));
  } else if (d.next_player) {
    const turn = d.next_player === meId();
    parts.push(h("p", { class: "turn-note" + (turn ? " mine" : ""), "aria-live": "polite" },
      turn ? t("your_turn") : t("their_turn", { name: name(d.next_player) })));
  }
  parts.push(renderBoard(d, mine));
  return parts;
}

function renderBoard(d, mine) {
  const len = d.length || 5;
  const rows = d.rows.map((row) => {
    const tag = h("span", { class: "tag", title: name(row.player) }, (S.names[row.player] || "?").slice(0, 4));
    if (row.skipped) {
      return h("div", { class: "brow" + (row.player === meId() ? " me" : ""), role: "row" }, tag,
        h("div", { class: "tile skip", style: `width:calc(${len} * var(--tile) + ${len - 1} * .3rem)` }, t("skipped")));
    }
    return h("div", { class: "brow" + (row.player === meId() ? " me" : ""), role: "row" }, tag,
      row.tiles.map((l, i) => h("div", { class: `tile ${row.marks[i]}`, role: "cell",
        "aria-label": t("tile_" + row.marks[i], { l: l.toUpperCase() }) }, l)));
  });
  if (mine && !d.over && d.next_player === meId()) {
    const cells = [];
    for (let i = 0; i < len; i++) {
      const l = S.input[i];
      cells.push(h("div", { class: "tile" + (l ? " filled" : ""), role: "cell" }, l || ""));
    }
    rows.push(h("div", { class: "brow input me" + (S.shake ? " shake" : ""), role: "row", "aria-label": S.input.join("") },
      h("span", { class: "tag" }, t("you").slice(0, 4)), cells));
  }
  return h("div", { class: "board", role: "grid", "aria-label": t("board"), dir: "ltr" }, rows);
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

function renderKeyboard(d) {
  const states = letterStates(d);
  const enabled = myTurn();
  const rows = (S.keyboard.length ? S.keyboard : [S.alphabet]).map((row, i, all) => {
    const keys = row.map((l) => h("button", { class: "key " + (states[l] || ""), type: "button", disabled: !enabled,
      "aria-label": states[l] ? t("tile_" + states[l], { l: l.toUpperCase() }) : l.toUpperCase(),
      onclick: () => typeTile(l) }, l));
    if (i === all.length - 1) {
      keys.unshift(h("button", { class: "key wide", type: "button", id: "enter", disabled: !enabled, onclick: submit }, t("enter")));
      keys.push(h("button", { class: "key wide", type: "button", disabled: !enabled, onclick: backspace,
        "aria-label": t("backspace") }, "⌫"));
    }
    return h("div", { class: "krow" }, keys);
  });
  return h("div", { class: "keyboard", role: "group", "aria-label": t("keyboard"), dir: "ltr" }, rows);
}

function hearts(n) { return "♥".repeat(Math.max(0, n)) + "♡".repeat(Math.max(0, 3 - n)); }

function renderStandings(final) {
  const list = [...S.standings].sort((x, y) =>
    (x.place || 99) - (y.place || 99) || (y.lives - x.lives) || x.nickname.localeCompare(y.nickname));
  return h("section", { class: "card", "aria-labelledby": "st-h" },
    h("h2", { id: "st-h" }, final ? t("tournament_over") : t("standings")),
    h("table", { class: "standings" },
      h("thead", {}, h("tr", {}, h("th", {}, t("place")), h("th", {}, t("player")), h("th", {}, ""),
        h("th", {}, t("change_col")))),
      h("tbody", {}, list.map((s) => {
        const status = s.left ? t("left") : s.eliminated ? t("out") : !s.connected ? t("disconnected") : "";
        const ch = s.rating_change;
        return h("tr", { class: (s.player_id === meId() ? "me " : "") + (s.eliminated ? "out" : "") },
          h("td", {}, s.place || ""),
          h("td", {}, name(s.player_id)),
          h("td", {}, h("span", { class: "hearts", "aria-label": t("lives", { n: s.lives }) }, hearts(s.lives)),
            status ? h("span", { class: "muted" }, " " + status) : null),
          h("td", { class: ch > 0 ? "pos" : ch < 0 ? "neg" : "" }, ch === null || ch === undefined ? "" : (ch > 0 ? "+" : "") + ch));
      }))));
}

function renderEnd() {
  const e = S.end;
  const winners = (e ? e.winners : []).map(name).join(", ");
  const out = [h("section", { class: "card" },
    h("h2", { class: "big" }, t("tournament_over")),
    h("p", { class: "big" }, t("winner", { names: winners })),
    S.rating ? h("p", { class: "banner" }, ratingLine(S.rating)) : null,
    h("div", { class: "row" },
      S.party ? null : h("button", { class: "primary", id: "again",
        onclick: () => send({ action: "join", language: S.lobby ? S.lobby.language : S.gameLang }) }, t("play_again")),
      h("button", { onclick: () => { S.screen = "home"; render(); } }, t("home"))))];
  out.push(renderStandings(true));
  return out;
}

// ---- timers ----------------------------------------------------------------------------------

function tick() {
  const now = serverNow();
  for (const el of document.querySelectorAll("[data-deadline]")) {
    const left = Math.max(0, Number(el.dataset.deadline) - now);
    const s = Math.ceil(left / 1000);
    if (el.dataset.format === "intro") el.textContent = t("round_intro", { n: S.round ? S.round.round : "", s: t("seconds", { s }) });
    else el.textContent = t("seconds", { s });
    el.classList.toggle("low", left < 5000);
  }
  if (S.screen === "tournament" && S.round && S.introUntil && now >= S.introUntil && document.querySelector(".overlay")) {
    render();
  }
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
render();
connect();
