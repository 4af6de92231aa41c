// Every error code the backend can hand the page, and the sentence a person reads for each (en, ru, zh). The raw
// English `message` / `reason` / `text` of our own errors never reaches the screen: it may hold SQL or an OS error.
//
// Where the codes come from (keep these lists in step; tests check both sides):
// - SHELL_ERROR_CODES: the `AppError` codes of src-tauri/src — `AppError::new("…")`, the `From` impls in
//   src-tauri/src/error.rs (store, keychain, engine start, io), voice.rs `capture_error`. The Rust test
//   `error::tests::the_page_names_every_code` (src-tauri/src/error.rs) checks `APP_ERROR_CODES` against the sources and
//   this file against it.
// - REFUSAL_CODES: `Refusal::ALL_CODES` in crates/protocol/src/refusal.rs — `rejected{code}` and the `AppError` of a
//   refused command.
// - ENGINE_ERROR_CODES: `error{code}` events the engine makes itself (crates/protocol/src/session.rs, media.rs;
//   crates/client/src/engine.rs, http.rs, recorder.rs).
// - AGENT_ERROR_CODES: what the agent sends (adapter spec §10, A-22; chat-v3 G-7).
// - DISCONNECT_CODES: `disconnected{code}` (`DisconnectCode` in crates/protocol/src/event.rs).
import { catalogs, t, type MessageKey } from './i18n/index.svelte';

export const SHELL_ERROR_CODES = [
  // error.rs
  'not_found',
  'invalid_input',
  'internal',
  'disk_full',
  'store_corrupt',
  'store_busy',
  'store_too_new',
  'store_error',
  'keychain_unavailable',
  'keychain_locked',
  'keychain_error',
  'invalid_url',
  'permission_denied',
  'io_error',
  // commands.rs, state.rs, media.rs, avatar.rs
  'no_token',
  'open_failed',
  'blocked_url',
  'forbidden_path',
  'is_folder',
  'too_large',
  'not_an_image',
  'not_connected',
  // voice.rs
  'no_microphone',
  'microphone_not_found',
  'microphone_busy',
  'microphone_lost',
  'too_short',
  'audio_failed',
  'invalid_shortcut',
  'shortcut_unavailable',
  'not_recording',
  'tts_unavailable',
  'tts_failed',
] as const;

export const REFUSAL_CODES = [
  'empty',
  'too_long',
  'capability_off',
  'too_big',
  'bad_frame',
  'not_connected',
  'unknown_card',
  'already_answered',
  'not_an_option',
  'no_answer',
  'id_in_use',
  'wrong_dialect',
  'file_unreadable',
  'not_a_file',
  'disk_full',
  'store_error',
  'not_found',
  'engine_stopped',
  'bad_command',
  'not_sent',
  'cancelled',
  'file_too_large',
  'upload_failed',
] as const;

export const ENGINE_ERROR_CODES = [
  'disk',
  'cancelled',
  'media_incomplete',
  'malformed_frame',
  'bad_reply',
  'upload_failed',
  'not_sent',
  // downloads (http.rs)
  'too_big',
  'access_denied',
  'bad_url',
  'download_failed',
  'download_too_big',
  'download_no_space',
  // received media (media.rs)
  'bad_frame',
  'bad_base64',
  'too_many_unfinished',
  'empty_media',
] as const;

export const AGENT_ERROR_CODES = [
  'auth_failed',
  'unauthorized',
  'forbidden',
  'too_big',
  'bad_frame',
  'device_offline',
  'unsupported_frame',
  'timeout',
  'offline',
  'rate_limited',
  'file_too_large',
  'unsupported',
  'upload_failed',
  'internal',
] as const;

export const DISCONNECT_CODES = [
  'refused',
  'unreachable',
  'dns',
  'timeout',
  'tls',
  'http',
  'closed',
  'lost',
  'dead',
  'no_ready',
  'write_failed',
  'protocol',
] as const;

/** Codes of the engine's own `error`/`rejected` events: their English detail is never shown (only the translated
 *  sentence). (A failed call's message is never kept on a message: see `transmit` in state/chat.svelte.ts.) */
const OWN_CODES: ReadonlySet<string> = new Set<string>([...REFUSAL_CODES, ...ENGINE_ERROR_CODES]);

/** Every code a message, a notice or a failed call can carry (the test checks each has a sentence). */
export const ERROR_CODES: readonly string[] = [
  ...new Set<string>([...SHELL_ERROR_CODES, ...REFUSAL_CODES, ...ENGINE_ERROR_CODES, ...AGENT_ERROR_CODES]),
];

function has(key: string): key is MessageKey {
  return key in catalogs.en;
}

/** The sentence for an error attached to a message or shown as a notice (`error`/`rejected` events), or `null` for a
 *  code nobody listed (an agent's own). */
export function eventErrorText(code: string): string | null {
  const key = `error.code.${code}`;
  return has(key) ? t(key) : null;
}

/** The sentence for a failed call to the shell (`AppError.code`): its own wording where the same word means something
 *  else coming from the agent (`internal`), else the event's; a code nobody listed gets a general sentence. */
export function appErrorText(code: string): string {
  const own = `error.app.${code}`;
  if (has(own)) return t(own);
  return eventErrorText(code) ?? t('error.app.unknown');
}

/** Whether an `error`/`rejected` event's own text (beside its sentence) may be shown: only the agent's words, never the
 *  engine's (they can hold SQL, OS errors, paths). */
export function showsDetail(code: string): boolean {
  return !OWN_CODES.has(code);
}

/** `host:port` of a profile URL (the scheme's port when none is written), or the URL itself when it does not parse. */
export function hostPort(url: string): string {
  try {
    const u = new URL(url);
    const port = u.port || (u.protocol === 'wss:' || u.protocol === 'https:' ? '443' : '80');
    return `${u.hostname}:${port}`;
  } catch {
    return url;
  }
}

/** The banner's line for a dropped connection: "Can't reach 127.0.0.1:8787 — connection refused". An HTTP status
 *  found in the engine's detail is kept (`http`); nothing else of that detail is shown. */
export function disconnectText(code: string | null | undefined, url: string, reason = ''): string {
  const host = hostPort(url);
  const key = `disconnect.${code ?? ''}`;
  if (code === 'http') {
    const status = /\b([1-5]\d\d)\b/.exec(reason)?.[1];
    return status ? t('disconnect.httpStatus', { host, status }) : t('disconnect.http', { host });
  }
  return has(key) ? t(key, { host }) : t('disconnect.unknown', { host });
}
