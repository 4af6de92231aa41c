import type {
  AppInfo,
  AppSettings,
  BackendErrorPayload,
  Command,
  Conversation,
  DeepLinkConnect,
  EngineEvent,
  ExportFormat,
  FileDropEvent,
  FileInfo,
  HistoryPage,
  Profile,
  ProfileInput,
  SearchHit,
  SendResult,
  UpdateCheck,
} from './types';
import { appErrorText } from '../errors';

/** The UI's only door to the Rust shell. Nothing UI-specific belongs here. */
export interface Backend {
  appInfo(): Promise<AppInfo>;
  /** Settings remembered per machine (the download limit); a new limit applies to the next connection. */
  appSettings(): Promise<AppSettings>;
  /** Saves them; answers with what was stored (values clamped). */
  appSaveSettings(settings: AppSettings): Promise<AppSettings>;

  listProfiles(): Promise<Profile[]>;
  createProfile(input: ProfileInput): Promise<Profile>;
  updateProfile(id: string, input: ProfileInput): Promise<Profile>;
  /** The agent evidently approved this device, or refused it again (`false`). */
  setPaired(profileId: string, paired: boolean): Promise<Profile>;
  /** The conversation the user made the agent's home channel (`/sethome`), or none. */
  setHome(profileId: string, conversationId: string | null): Promise<Profile>;
  deleteProfile(id: string): Promise<void>;
  setToken(profileId: string, token: string, sessionOnly: boolean): Promise<void>;
  deleteToken(profileId: string): Promise<void>;

  /** Starts the profile's engine; its events arrive on `onEvent` until `disconnect`. */
  connect(profileId: string, onEvent: (ev: EngineEvent) => void): Promise<void>;
  disconnect(profileId: string): Promise<void>;
  sendCommand(profileId: string, command: Command): Promise<SendResult>;

  listConversations(profileId: string): Promise<Conversation[]>;
  createConversation(profileId: string, title: string): Promise<Conversation>;
  renameConversation(id: string, title: string): Promise<void>;
  /** The composer's unsent text in a conversation (`null`: none). */
  getDraft(conversationId: string): Promise<string | null>;
  /** Keeps the composer's text as the conversation's draft; an empty text removes it. */
  setDraft(conversationId: string, text: string): Promise<void>;
  /** The user has the conversation open: what came in it so far is read (the store keeps this across restarts). */
  markRead(conversationId: string): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  history(conversationId: string, limit: number, before?: string): Promise<HistoryPage>;
  search(query: string, profileId?: string): Promise<SearchHit[]>;
  exportConversation(id: string, format: ExportFormat): Promise<void>;

  openLogsFolder(): Promise<void>;
  openExternal(url: string): Promise<void>;
  revealFile(path: string): Promise<void>;
  saveFileAs(path: string): Promise<void>;
  pickFiles(): Promise<string[]>;
  fileUrl(path: string): Promise<string>;
  downscaleImage(path: string, maxBytes: number): Promise<string>;

  /* Additions (see README): */
  openFile(path: string): Promise<void>;
  fileInfo(path: string): Promise<FileInfo>;
  writeTempFile(filename: string, base64: string): Promise<string>;
  /** The system clipboard's image saved as the PNG `filename` (its path), `null` when it holds none: for a paste whose
   *  event carried no file (WebKitGTK hands a page no image). */
  clipboardImage(filename: string): Promise<string | null>;
  notify(title: string, body: string): Promise<void>;
  /** Ask the release feed for a newer signed version (`not_configured` when this build has no update endpoint). */
  checkForUpdates(): Promise<UpdateCheck>;
  /** Download, verify and install the newer version, then restart (answers only when nothing was installed). */
  installUpdate(): Promise<UpdateCheck>;
  /** Native file drag & drop onto the window. Returns an unsubscribe function. */
  onFileDrop(handler: (ev: FileDropEvent) => void): () => void;
  /** A `hermes://connect?url=…` link opened the app: prefill a new profile (never carries a token). */
  onConnectLink?(handler: (link: DeepLinkConnect) => void): () => void;
}

/** A failed backend call: `message` is meant for the user. */
export class BackendError extends Error {
  readonly code: string;
  constructor(payload: BackendErrorPayload) {
    super(payload.message);
    this.name = 'BackendError';
    this.code = payload.code;
  }
}

export function isErrorPayload(e: unknown): e is BackendErrorPayload {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as BackendErrorPayload).code === 'string' &&
    typeof (e as BackendErrorPayload).message === 'string'
  );
}

/** Normalises anything thrown by the IPC layer into a BackendError. */
export function toBackendError(e: unknown): BackendError {
  if (e instanceof BackendError) return e;
  if (isErrorPayload(e)) return new BackendError(e);
  if (e instanceof Error) return new BackendError({ code: 'internal', message: e.message });
  return new BackendError({ code: 'internal', message: String(e) });
}

/** The user-facing text of any error: the sentence for its code in the user's language, never the raw English
 *  `message`, which can carry SQL or an OS error. */
export function errorMessage(e: unknown): string {
  return appErrorText(toBackendError(e).code);
}
