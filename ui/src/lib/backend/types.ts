// Hand-written mirror of the Rust shell's IPC surface (crates/protocol/src/event.rs and the Tauri commands).
// Generated bindings will replace this file later; keep every backend type here and nowhere else.

/* ---------- Engine events (serde tag "event") ---------- */

export interface PromptOption {
  id: string;
  label: string;
  /** `primary`, `danger` or empty: a hint only. */
  style?: string | null;
}

export type Direction = 'up' | 'down';

export type EngineEvent =
  | { event: 'connecting'; attempt: number }
  | { event: 'ready'; session: string; avatar_url?: string; capabilities: Record<string, unknown> }
  | { event: 'message'; id: string; text: string; final: boolean; reply_to?: string; session?: string }
  | { event: 'typing'; on: boolean }
  | { event: 'avatar'; state: string }
  | {
      event: 'prompt';
      id: string;
      kind: string;
      text: string;
      options: PromptOption[];
      command?: string;
      description?: string;
      timeout_seconds?: number;
    }
  | { event: 'prompt_done'; prompt_id: string; option_id?: string; expired: boolean }
  | {
      event: 'media';
      id: string;
      kind: string;
      mime?: string;
      filename: string;
      caption?: string;
      path: string;
      size: number;
      session?: string;
    }
  | { event: 'progress'; id: string; direction: Direction; done: number; total: number }
  | { event: 'error'; code: string; text: string; id?: string }
  | { event: 'sent'; id: string }
  | { event: 'delivered'; id: string }
  | { event: 'disconnected'; reason: string; retry_in_ms?: number }
  | { event: 'access_denied'; reason: string }
  | { event: 'rejected'; cmd: string; reason: string; id?: string };

export type EventOf<K extends EngineEvent['event']> = Extract<EngineEvent, { event: K }>;

/* ---------- Commands (serde tag "cmd") ---------- */

export type Command =
  | { cmd: 'text'; text: string; reply_to?: string; id?: string; session?: string }
  | { cmd: 'file'; path: string; caption?: string; id?: string; session?: string }
  | { cmd: 'audio'; path: string; text?: string; id?: string; session?: string }
  | { cmd: 'prompt'; prompt_id: string; option_id?: string; text?: string }
  | { cmd: 'cancel'; id: string }
  | { cmd: 'reconnect' }
  | { cmd: 'quit' };

/* ---------- Shell commands ---------- */

/** Every command error comes back as this object. */
export interface BackendErrorPayload {
  code: string;
  message: string;
}

export interface KeychainInfo {
  available: boolean;
  detail?: string;
}

export interface AppInfo {
  version: string;
  dataDir: string;
  logDir: string;
  keychain: KeychainInfo;
  demo: boolean;
}

export type Dialect = 'adapter' | 'v3';

export interface Profile {
  id: string;
  name: string;
  url: string;
  dialect: Dialect;
  deviceId: string;
  userId?: string;
  allowInsecureWs: boolean;
  avatarUrlOverride?: string;
  hasToken: boolean;
}

export interface ProfileInput {
  name: string;
  url: string;
  dialect: Dialect;
  userId?: string;
  allowInsecureWs: boolean;
  avatarUrlOverride?: string;
}

export interface SendResult {
  id?: string;
}

export interface Conversation {
  id: string;
  profileId: string;
  title: string;
  session: string;
  updatedAt: string;
  preview?: string;
}

export type MessageState = 'queued' | 'sent' | 'delivered' | 'failed' | 'received';

export interface Attachment {
  mediaId: string;
  kind: string;
  mime?: string;
  filename: string;
  path: string;
  size: number;
  caption?: string;
}

export interface StoredMessage {
  id: string;
  serverId?: string;
  direction: 'in' | 'out';
  text: string;
  final: boolean;
  state: MessageState;
  replyTo?: string;
  error?: { code: string; text: string };
  createdAt: string;
  attachments: Attachment[];
}

export interface HistoryPage {
  messages: StoredMessage[];
  hasMore: boolean;
}

export interface SearchHit {
  messageId: string;
  conversationId: string;
  profileId: string;
  /** Matched terms are wrapped in `[` `]`. */
  snippet: string;
  createdAt: string;
}

export type ExportFormat = 'markdown' | 'json';

/** Addition: what the composer needs to explain limits before sending. */
export interface FileInfo {
  path: string;
  name: string;
  size: number;
  mime?: string;
}

/** Addition: native file drag & drop (Tauri delivers paths, not DOM File objects). */
export type FileDropEvent =
  | { type: 'enter'; paths: string[] }
  | { type: 'over' }
  | { type: 'drop'; paths: string[] }
  | { type: 'leave' };

/* ---------- Updates (src-tauri/src/updater.rs, serde tag "status") ---------- */

export type UpdateCheck =
  | { status: 'not_configured'; current: string }
  | { status: 'up_to_date'; current: string }
  | { status: 'available'; current: string; version: string; notes: string | null; date: string | null }
  | { status: 'failed'; current: string; message: string };
