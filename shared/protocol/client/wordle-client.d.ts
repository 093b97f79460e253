// Types of wordle-client.js. The message types come from protocol.d.ts, generated from
// shared/protocol/asyncapi.json by Modelina (models.mjs): `Game` is the union of server messages.
import type {
  Game,
  ErrorCode,
  PlayerView,
  SessionAction,
  JoinAction,
  LeaveAction,
  GuessAction,
  NicknameAction,
  PartyCreateAction,
  PartyJoinAction,
  PartyLeaveAction,
  PartyStartAction,
  PartyRemoveAction,
  PartyResetInviteAction,
  PingAction,
  SignOutEverywhereAction,
  ProfileAction,
  LeaderboardAction,
  HistoryAction,
  ReplayAction,
  ProfileEvent,
  LeaderboardEvent,
  HistoryEvent,
  ReplayEvent,
} from "./protocol.js";

export * from "./protocol.js";

/** The protocol version the library speaks and declares in `session` ("MAJOR.MINOR"). */
export declare const PROTOCOL_VERSION: string;

/** A server event as listeners get it (batches unfolded). A later server may send a type this
 * version does not know: check `type` and ignore the rest. */
export type ServerEvent = Exclude<Game, { type: "batch" }>;

/** A client message (request_id is added when missing). */
export type ClientMessage =
  | SessionAction
  | JoinAction
  | LeaveAction
  | GuessAction
  | NicknameAction
  | PartyCreateAction
  | PartyJoinAction
  | PartyLeaveAction
  | PartyStartAction
  | PartyRemoveAction
  | PartyResetInviteAction
  | PingAction
  | SignOutEverywhereAction
  | ProfileAction
  | LeaderboardAction
  | HistoryAction
  | ReplayAction;

export type ConnectionState = "idle" | "connecting" | "open" | "session" | "reconnecting" | "closed";

/** Where the session token lives: sync or async (React Native's secure storage). */
export interface TokenStorage {
  get(): string | null | undefined | Promise<string | null | undefined>;
  set(token: string): void | Promise<void>;
  clear(): void | Promise<void>;
}

/** The part of the WebSocket API the client uses (browsers, React Native, Node 22's global). */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code?: number }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export interface ClientOptions {
  url: string;
  WebSocket?: new (url: string) => WebSocketLike;
  storage?: TokenStorage;
  /** Send a ping when nothing was sent for this long (ms; guide: at least every 20 s). */
  heartbeatMs?: number;
  /** A socket silent this long (ms) is dead: abandoned, and a new one resumes. */
  silenceMs?: number;
  requestTimeoutMs?: number;
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  retryAttempts?: number;
  clockSamples?: number;
  now?: () => number;
  random?: () => number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
  clearTimeout?: (id: unknown) => void;
}

export interface RequestOptions {
  /** Give up after this long (ms); default requestTimeoutMs. */
  timeoutMs?: number;
  /** Give up at this server time (ms since the epoch), e.g. the turn's deadline_ms. */
  deadlineMs?: number;
}

export declare const DEFAULTS: Readonly<Required<Pick<ClientOptions,
  | "heartbeatMs" | "silenceMs" | "requestTimeoutMs" | "reconnectBaseMs" | "reconnectMaxMs"
  | "retryBaseMs" | "retryMaxMs" | "retryAttempts" | "clockSamples">>>;

export declare class ProtocolError extends Error {
  constructor(code: string, message?: string, event?: ServerEvent | null);
  /** An ErrorCode of the contract, or timeout | connection_lost | not_connected | closed. */
  readonly code: ErrorCode | "timeout" | "connection_lost" | "not_connected" | "closed" | string;
  readonly event: ServerEvent | null;
}

export declare function memoryStorage(initial?: string | null): TokenStorage;
export declare function webStorage(
  store: { getItem(key: string): string | null; setItem(key: string, value: string): void; removeItem(key: string): void },
  key?: string,
): TokenStorage;
export declare function backoffMs(attempt: number, baseMs: number, maxMs: number, random?: () => number): number;

export interface ClientListeners {
  state: (state: ConnectionState, detail: { reason?: string; resumed?: boolean; retryAt?: number }) => void;
  event: (event: ServerEvent) => void;
  frame: (events: ServerEvent[]) => void;
  gap: (gap: { expected: number; got: number }) => void;
  untyped: (frame: Record<string, unknown>) => void;
}

export declare class WordleClient {
  constructor(options: ClientOptions);
  readonly state: ConnectionState;
  readonly player: PlayerView | null;
  readonly protocol: number | null;
  readonly socket: WebSocketLike | null;
  readonly connects: number;
  readonly retryAt: number;
  readonly lostAt: number;
  readonly heardAt: number;
  readonly offsetMs: number;
  on<K extends keyof ClientListeners>(name: K, fn: ClientListeners[K]): () => void;
  connect(): void;
  reconnectNow(): void;
  abandon(reason?: string): void;
  close(): void;
  serverNow(): number;
  request(message: ClientMessage, options?: RequestOptions): Promise<ServerEvent>;
  send(message: ClientMessage, options?: RequestOptions): string | null;
  nextRequestId(action?: string): string;
  /** `profile` (since 1.3): a player's public profile (default: you). */
  profile(playerId?: string, options?: RequestOptions): Promise<ProfileEvent>;
  /** `leaderboard` (since 1.3): the rating board, or a language's weekly board. */
  leaderboard(
    board: "rating" | "weekly",
    filter?: { language?: string; week?: "current" | "previous" },
    options?: RequestOptions,
  ): Promise<LeaderboardEvent>;
  /** `history` (since 1.3): a page of finished tournaments, newest first. */
  history(
    page?: { playerId?: string; cursor?: string; limit?: number },
    options?: RequestOptions,
  ): Promise<HistoryEvent>;
  /** `replay` (since 1.3): a finished tournament's record. */
  replay(tournamentId: string, options?: RequestOptions): Promise<ReplayEvent>;
  ping(): void;
  /** `session` with the stored token on this connection: the reply's snapshot redraws. */
  resync(): Promise<boolean>;
}
