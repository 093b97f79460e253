// One player plays a whole tournament through the reference client library
// (shared/protocol/client/wordle-client.js) against the local runtime, whose bots fill the lobby.
//   node --experimental-websocket tests/e2e/reference_client_plays.mjs WS_URL WORDLIST_DIR
// Guesses random words of the duel's length from WORDLIST_DIR/allowed-N.txt; drops its socket
// once in the second round (the library resumes); prints a JSON summary on stdout at the
// tournament's end and exits 0 (1 on a failure, with the reason).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { WordleClient, ProtocolError, memoryStorage } from "../../shared/protocol/client/wordle-client.js";

const [url, wordlists] = process.argv.slice(2);
const words = {};
const wordsOf = (n) =>
  (words[n] ||= readFileSync(join(wordlists, `allowed-${n}.txt`), "utf8").split("\n").filter(Boolean));

const summary = {
  states: [], types: {}, frames: 0, batches_unfolded: 0, replies: {}, refusals: {},
  timeouts: 0, resumed: 0, gaps: 0, untyped: 0, guesses: 0, offsets: [], end: null, rating: null,
  eliminated: null, rounds: 0, joined: null,
};
const duels = {}; // duel id -> {length, next_player, deadline_ms, over}
let dropped = false;
let finished = false;

const client = new WordleClient({ url, WebSocket: globalThis.WebSocket, storage: memoryStorage() });
const me = () => client.player && client.player.id;

client.on("state", (state, detail) => {
  summary.states.push(detail.reason ? `${state}:${detail.reason}` : state);
  if (state === "session" && detail.resumed) summary.resumed++;
  if (state === "session" && summary.joined === null) {
    summary.joined = false;
    client.request({ action: "join", language: "en" }).then(
      (reply) => { summary.joined = reply.type; count(summary.replies, `join->${reply.type}`); },
      (err) => fail(`join refused: ${err.code}`),
    );
  }
});
client.on("frame", (events) => {
  summary.frames++;
  if (events.length > 1) summary.batches_unfolded++;
});
client.on("gap", () => { summary.gaps++; });
client.on("untyped", () => { summary.untyped++; });
client.on("event", (event) => {
  count(summary.types, event.type);
  if (event.type === "duel_start" && event.players.includes(me())) {
    duels[event.duel_id] = { length: event.length, next_player: event.next_player, deadline_ms: event.deadline_ms, over: false };
    play(event.duel_id);
  } else if (event.type === "turn" && duels[event.duel_id]) {
    Object.assign(duels[event.duel_id], { next_player: event.next_player, deadline_ms: event.deadline_ms });
    play(event.duel_id);
  } else if (event.type === "duel_end" && duels[event.duel_id]) {
    duels[event.duel_id].over = true;
  } else if (event.type === "round") {
    summary.rounds = Math.max(summary.rounds, event.round);
    if (event.round === 2 && !dropped) {
      dropped = true;
      setTimeout(() => client.abandon("test drops the socket"), 200); // resume mid-tournament
    }
  } else if (event.type === "eliminated" && event.player_id === me()) {
    summary.eliminated = event.reason;
  } else if (event.type === "rating") {
    summary.rating = { place: event.place, change: event.change };
  } else if (event.type === "tournament_end") {
    summary.end = { winners: event.winners.length, places: event.places.length };
    finish();
  } else if (event.type === "session" && event.snapshot) {
    const board = event.snapshot.duel;
    if (board && board.players.includes(me()) && !board.over) {
      duels[board.duel_id] = { length: board.length, next_player: board.next_player, deadline_ms: board.deadline_ms, over: false };
      play(board.duel_id);
    }
    if (event.snapshot.tournament_end) { summary.end = { winners: event.snapshot.tournament_end.winners.length }; finish(); }
  }
});

const inFlight = new Set();
function play(duelId) {
  const d = duels[duelId];
  if (!d || d.over || d.next_player !== me() || inFlight.has(duelId) || client.state !== "session") return;
  inFlight.add(duelId);
  const pool = wordsOf(d.length);
  const word = pool[Math.floor(Math.random() * pool.length)];
  summary.guesses++;
  client.request({ action: "guess", duel_id: duelId, word }, { deadlineMs: d.deadline_ms }).then(
    (reply) => count(summary.replies, `guess->${reply.type}`),
    (err) => {
      if (!(err instanceof ProtocolError)) throw err;
      if (err.code === "timeout") summary.timeouts++;
      count(summary.refusals, err.code);
    },
  ).finally(() => { inFlight.delete(duelId); play(duelId); });
}

function count(table, key) { table[key] = (table[key] || 0) + 1; }

setInterval(() => { if (client.state === "session") summary.offsets.push(Math.round(client.offsetMs)); }, 5000).unref();

function finish() {
  if (finished) return;
  finished = true;
  setTimeout(() => {
    client.close();
    process.stdout.write(JSON.stringify({ ...summary, player: me(), final_state: client.state }) + "\n");
    process.exit(0);
  }, 500);
}

function fail(reason) {
  process.stdout.write(JSON.stringify({ ...summary, failure: reason }) + "\n");
  process.exit(1);
}

client.connect();
