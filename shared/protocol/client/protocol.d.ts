// Generated from shared/protocol/asyncapi.json by Modelina (models.mjs --dts): do not edit.
// Regenerate: node shared/protocol/client/models.mjs --dts shared/protocol/client/protocol.d.ts

export type Game = SessionEvent | PlayerEvent | LobbyEvent | RoundEvent | DuelStartEvent | TurnEvent | DuelEndEvent | StandingsEvent | EliminatedEvent | RatingEvent | TournamentEndEvent | PartyEvent | PlayerStatusEvent | PongEvent | ErrorEvent | ProfileEvent | LeaderboardEvent | HistoryEvent | ReplayEvent | BatchEvent;

export interface SessionEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "session";
  'player': PlayerView;
  'token': string | null;
  'resumed': boolean;
  'protocol': number;
  'protocol_version': string;
  'protocol_min': string;
  'snapshot': Snapshot | null;
  'ping_interval_ms': number;
  'heartbeat_timeout_ms': number;
  'reconnect_window_ms': number;
  'additionalProperties'?: Record<string, any>;
}

export interface PlayerView {
  'id': string;
  'nickname': string;
  'rating': number;
  'additionalProperties'?: Record<string, any>;
}

export interface Snapshot {
  'language': LanguageInfo | null;
  'lobby': LobbyEvent | null;
  'round': RoundEvent | null;
  'duel': DuelBoard | null;
  'standings': StandingsEvent | null;
  'party': PartyEvent | null;
  'spectating': DuelBoard[];
  'statuses': PlayerStatusEvent[];
  'eliminated': EliminatedEvent | null;
  'rating': RatingEvent | null;
  'tournament_end': TournamentEndEvent | null;
  'seq': number | null;
  'additionalProperties'?: Record<string, any>;
}

export interface LanguageInfo {
  'code': string;
  'name': string;
  'native_name': string;
  'alphabet': string[];
  'keyboard': string[][];
  'direction': LanguageInfoDirection;
  'multi_letter_tiles': string[];
  'additionalProperties'?: Record<string, any>;
}

export type LanguageInfoDirection = "ltr" | "rtl";

export interface LobbyEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "lobby";
  'lobby_id': string;
  'language': string;
  'seats': number;
  'players': PlayerView[];
  'party_id': string | null;
  'status': LobbyStatus;
  'tournament_id': string | null;
  'alphabet': string[];
  'keyboard': string[][];
  'language_info': LanguageInfo;
  'additionalProperties'?: Record<string, any>;
}

export type LobbyStatus = "waiting" | "started" | "left";

export interface RoundEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "round";
  'tournament_id': string;
  'round': number;
  'pairs': Pair[];
  'bye': string | null;
  'intro_deadline_ms': number;
  'standings': Standing[];
  'additionalProperties'?: Record<string, any>;
}

export interface Pair {
  'duel_id': string;
  'players': string[];
  'additionalProperties'?: Record<string, any>;
}

export interface Standing {
  'player_id': string;
  'nickname': string;
  'lives': number;
  'eliminated': boolean;
  'left': boolean;
  'connected': boolean;
  'place': number | null;
  'rating_change': number | null;
  'additionalProperties'?: Record<string, any>;
}

export interface DuelBoard {
  'duel_id': string;
  'players': string[];
  'length': number;
  'rows': Row[];
  'next_player': string | null;
  'deadline_ms': number | null;
  'over': boolean;
  'result': DuelBoardResult | null;
  'winner': string | null;
  'word': string | null;
  'display': string | null;
  'additionalProperties'?: Record<string, any>;
}

export interface Row {
  'player': string;
  'word': string | null;
  'tiles': string[] | null;
  'marks': RowMark[] | null;
  'skipped': boolean;
  'additionalProperties'?: Record<string, any>;
}

export type RowMark = "correct" | "present" | "absent";

export type DuelBoardResult = "win" | "draw";

export interface StandingsEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "standings";
  'tournament_id': string;
  'round': number;
  'players': Standing[];
  'additionalProperties'?: Record<string, any>;
}

export interface PartyEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "party";
  'party_id': string | null;
  'invite': string | null;
  'leader': string | null;
  'members': PlayerView[];
  'status': PartyStatus;
  'additionalProperties'?: Record<string, any>;
}

export type PartyStatus = "open" | "queued" | "playing" | "left";

export interface PlayerStatusEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "player_status";
  'tournament_id': string | null;
  'lobby_id': string | null;
  'player_id': string;
  'status': PlayerStatus;
  'reconnect_deadline_ms': number | null;
  'additionalProperties'?: Record<string, any>;
}

export type PlayerStatus = "connected" | "disconnected";

export interface EliminatedEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "eliminated";
  'tournament_id': string;
  'round': number;
  'player_id': string;
  'reason': EliminatedReason;
  'additionalProperties'?: Record<string, any>;
}

export type EliminatedReason = "lives" | "left" | "timeout";

export interface RatingEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "rating";
  'tournament_id': string;
  'place': number;
  'change': number;
  'rating': number;
  'previous': number;
  'additionalProperties'?: Record<string, any>;
}

export interface TournamentEndEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "tournament_end";
  'tournament_id': string;
  'places': Standing[];
  'winners': string[];
  'additionalProperties'?: Record<string, any>;
}

export interface ErrorEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "error";
  'code': ErrorCode;
  'message': string;
  'retry_after_ms': number | null;
  'additionalProperties'?: Record<string, any>;
}

export type ErrorCode = "rule_violation" | "unknown_language" | "wrong_length" | "invalid_letters" | "not_in_word_list" | "not_your_turn" | "turn_over" | "not_in_duel" | "duel_over" | "duel_not_started" | "not_in_tournament" | "eliminated" | "tournament_over" | "lobby_full" | "rating_window" | "already_queued" | "already_playing" | "not_queued" | "party_full" | "not_party_leader" | "not_in_party" | "already_in_party" | "party_member_playing" | "party_member_offline" | "unknown_invite" | "invalid_nickname" | "nickname_lookalike" | "paused" | "message_too_large" | "invalid_json" | "not_an_object" | "unknown_action" | "missing_field" | "unknown_field" | "wrong_type" | "field_too_long" | "invalid_value" | "no_session" | "invalid_token" | "session_bound" | "unsupported_protocol" | "too_many_new_players" | "session_replaced" | "rate_limited" | "try_again" | "internal_error" | "not_found" | "invalid_cursor";

export interface BatchEvent {
  'request_id': any;
  'seq': any;
  'type': "batch";
  'events': (SessionEvent | PlayerEvent | LobbyEvent | RoundEvent | DuelStartEvent | TurnEvent | DuelEndEvent | StandingsEvent | EliminatedEvent | RatingEvent | TournamentEndEvent | PartyEvent | PlayerStatusEvent | PongEvent | ErrorEvent | ProfileEvent | LeaderboardEvent | HistoryEvent | ReplayEvent)[];
  'additionalProperties'?: Record<string, any>;
}

export type SessionEventType = "session";

export interface PlayerEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "player";
  'player': PlayerView;
  'additionalProperties'?: Record<string, any>;
}

export type PlayerEventType = "player";

export interface DuelStartEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "duel_start";
  'tournament_id': string;
  'round': number;
  'duel_id': string;
  'players': string[];
  'opponent': string | null;
  'length': number;
  'first': string;
  'turn': number;
  'next_player': string;
  'deadline_ms': number;
  'remaining_ms': number;
  'additionalProperties'?: Record<string, any>;
}

export type DuelStartEventType = "duel_start";

export interface TurnEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "turn";
  'tournament_id': string;
  'duel_id': string;
  'turn': number;
  'row': Row;
  'next_player': string | null;
  'deadline_ms': number | null;
  'remaining_ms': number | null;
  'additionalProperties'?: Record<string, any>;
}

export type TurnEventType = "turn";

export interface DuelEndEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "duel_end";
  'tournament_id': string;
  'duel_id': string;
  'result': DuelEndResult;
  'winner': string | null;
  'reason': DuelEndReason;
  'word': string;
  'display': string | null;
  'spectating': DuelBoard[];
  'additionalProperties'?: Record<string, any>;
}

export type DuelEndEventType = "duel_end";

export type DuelEndResult = "win" | "draw";

export type DuelEndReason = "solved" | "turns_used" | "left" | "timeout";

export interface PongEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "pong";
  'server_time_ms': number;
  'additionalProperties'?: Record<string, any>;
}

export type PongEventType = "pong";

export type ErrorEventType = "error";

export interface ProfileEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "profile";
  'player': Profile;
  'additionalProperties'?: Record<string, any>;
}

export type ProfileEventType = "profile";

export interface Profile {
  'player_id': string;
  'nickname': string;
  'rating': number;
  'tournaments': number;
  'wins': number;
  'podiums': number;
  'average_place': number | null;
  'best_rating': number | null;
  'languages': LanguageStats[];
  'rating_history': RatingPoint[];
  'additionalProperties'?: Record<string, any>;
}

export interface LanguageStats {
  'language': string;
  'tournaments': number;
  'average_place': number | null;
  'additionalProperties'?: Record<string, any>;
}

export interface RatingPoint {
  'tournament_id': string;
  'ended_ms': number;
  'language': string;
  'place': number;
  'rating_before': number;
  'rating_after': number;
  'additionalProperties'?: Record<string, any>;
}

export interface LeaderboardEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "leaderboard";
  'board': LeaderboardBoard;
  'language': string | null;
  'week': string | null;
  'entries': BoardEntry[];
  'me': BoardEntry | null;
  'around': BoardEntry[];
  'additionalProperties'?: Record<string, any>;
}

export type LeaderboardEventType = "leaderboard";

export type LeaderboardBoard = "rating" | "weekly";

export interface BoardEntry {
  'rank': number | null;
  'player_id': string;
  'nickname': string;
  'score': number;
  'additionalProperties'?: Record<string, any>;
}

export interface HistoryEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "history";
  'player_id': string;
  'tournaments': HistoryEntry[];
  'next_cursor': string | null;
  'additionalProperties'?: Record<string, any>;
}

export type HistoryEventType = "history";

export interface HistoryEntry {
  'tournament_id': string;
  'ended_ms': number;
  'language': string;
  'place': number;
  'players': number;
  'rating_before': number;
  'rating_after': number;
  'opponents': Opponent[];
  'additionalProperties'?: Record<string, any>;
}

export interface Opponent {
  'player_id': string;
  'nickname': string;
  'additionalProperties'?: Record<string, any>;
}

export interface ReplayEvent {
  'request_id': string | null;
  'seq': number | null;
  'type': "replay";
  'record': TournamentRecord;
  'additionalProperties'?: Record<string, any>;
}

export type ReplayEventType = "replay";

export interface TournamentRecord {
  'format': "wordle-tournament-record";
  'version': number;
  'tournament_id': string;
  'language': string;
  'started_ms': number;
  'ended_ms': number;
  'players': RecordPlayer[];
  'rounds': RecordRound[];
  'additionalProperties'?: Record<string, any>;
}

export interface RecordPlayer {
  'player_id': string;
  'nickname': string;
  'place': number;
  'rating_before': number;
  'rating_change': number;
  'rating_after': number;
  'additionalProperties'?: Record<string, any>;
}

export interface RecordRound {
  'round_no': number;
  'bye': string | null;
  'duels': RecordDuel[];
  'additionalProperties'?: Record<string, any>;
}

export interface RecordDuel {
  'duel_id': string;
  'players': string[];
  'first': string;
  'word': string;
  'length': number;
  'result': RecordDuelResult;
  'winner': string | null;
  'reason': RecordDuelReason;
  'rows': RecordRow[];
  'additionalProperties'?: Record<string, any>;
}

export type RecordDuelResult = "win" | "draw";

export type RecordDuelReason = "solved" | "turns_used" | "left" | "timeout";

export interface RecordRow {
  'player_id': string;
  'word': string | null;
  'tiles': string[] | null;
  'marks': RecordRowMark[] | null;
  'skipped': boolean;
  'at_ms': number;
  'additionalProperties'?: Record<string, any>;
}

export type RecordRowMark = "correct" | "present" | "absent";

export interface SessionAction {
  'request_id'?: string | null;
  'action': "session";
  'token'?: string | null;
  'protocol'?: string | null;
}

export interface JoinAction {
  'request_id'?: string | null;
  'action': "join";
  'language': string;
}

export interface LeaveAction {
  'request_id'?: string | null;
  'action': "leave";
}

export interface GuessAction {
  'request_id'?: string | null;
  'action': "guess";
  'duel_id': string;
  'word': string;
}

export interface NicknameAction {
  'request_id'?: string | null;
  'action': "nickname";
  'nickname': string;
}

export interface PartyCreateAction {
  'request_id'?: string | null;
  'action': "party_create";
}

export interface PartyJoinAction {
  'request_id'?: string | null;
  'action': "party_join";
  'invite': string;
}

export interface PartyLeaveAction {
  'request_id'?: string | null;
  'action': "party_leave";
}

export interface PartyStartAction {
  'request_id'?: string | null;
  'action': "party_start";
  'language': string;
}

export interface PartyRemoveAction {
  'request_id'?: string | null;
  'action': "party_remove";
  'player_id': string;
}

export interface PartyResetInviteAction {
  'request_id'?: string | null;
  'action': "party_reset_invite";
}

export interface PingAction {
  'request_id'?: string | null;
  'action': "ping";
  'additionalProperties'?: Record<string, any>;
}

export interface SignOutEverywhereAction {
  'request_id'?: string | null;
  'action': "sign_out_everywhere";
}

export interface ProfileAction {
  'request_id'?: string | null;
  'action': "profile";
  'player_id'?: string | null;
}

export interface LeaderboardAction {
  'request_id'?: string | null;
  'action': "leaderboard";
  'board': LeaderboardBoard;
  'language'?: string | null;
  'week'?: LeaderboardWeek | null;
}

export type LeaderboardWeek = "current" | "previous";

export interface HistoryAction {
  'request_id'?: string | null;
  'action': "history";
  'player_id'?: string | null;
  'cursor'?: string | null;
  'limit'?: number | null;
}

export interface ReplayAction {
  'request_id'?: string | null;
  'action': "replay";
  'tournament_id': string;
}
