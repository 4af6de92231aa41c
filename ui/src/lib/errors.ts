// Every error code the backend can hand the page, and the sentence a person reads for each (en, ru, zh). The raw
// English `message` / `reason` / `text` of our own errors never reaches the screen: it may hold SQL or an OS error.
//
// Where the codes come from:
// - ErrorCode (generated in ../bindings): every `AppError.code` a failed call can carry — the shell's own and a
//   refused command's. APP_ERROR_KEYS below is keyed by that union, so a code added in Rust without a sentence here
//   fails `npm run check`.
// - REFUSAL_CODES: `Refusal::ALL_CODES` in crates/protocol/src/refusal.rs — `rejected{code}` and the `AppError` of a
//   refused command. The Rust test `error::tests::the_page_names_every_code` (src-tauri/src/error.rs) checks this list
//   and DISCONNECT_CODES against the Rust sources.
// - ENGINE_ERROR_CODES: `error{code}` events the engine makes itself (crates/protocol/src/session, media.rs;
//   crates/client/src/engine.rs, http.rs, recorder.rs).
// - AGENT_ERROR_CODES: what the agent sends (adapter spec §10, A-22; chat-v3 G-7).
// - DISCONNECT_CODES: `disconnected{code}` (`DisconnectCode` in crates/protocol/src/event.rs).
import type { ErrorCode } from '../bindings';
import { t, type MessageKey } from './i18n/index.svelte';
import en from './i18n/en';

/** The sentence of each code a failed call can carry: its own wording where the same word means something else
 *  coming from the agent (`error.app.internal`), else the event's (`error.code.…`). */
const APP_ERROR_KEYS: { readonly [C in ErrorCode]: MessageKey } = {
  not_found: 'error.code.not_found',
  invalid_input: 'error.app.invalid_input',
  internal: 'error.app.internal',
  disk_full: 'error.app.disk_full',
  store_corrupt: 'error.app.store_corrupt',
  store_busy: 'error.app.store_busy',
  store_too_new: 'error.app.store_too_new',
  store_error: 'error.app.store_error',
  keychain_unavailable: 'error.app.keychain_unavailable',
  keychain_locked: 'error.app.keychain_locked',
  keychain_error: 'error.app.keychain_error',
  invalid_url: 'error.app.invalid_url',
  permission_denied: 'error.app.permission_denied',
  io_error: 'error.app.io_error',
  no_token: 'error.app.no_token',
  open_failed: 'error.app.open_failed',
  blocked_url: 'error.app.blocked_url',
  forbidden_path: 'error.app.forbidden_path',
  file_not_granted: 'error.app.file_not_granted',
  not_viewable: 'error.app.not_viewable',
  is_folder: 'error.app.is_folder',
  too_large: 'error.app.too_large',
  not_an_image: 'error.app.not_an_image',
  not_connected: 'error.code.not_connected',
  no_microphone: 'error.app.no_microphone',
  microphone_not_found: 'error.app.microphone_not_found',
  microphone_busy: 'error.app.microphone_busy',
  microphone_lost: 'error.app.microphone_lost',
  too_short: 'error.app.too_short',
  audio_failed: 'error.app.audio_failed',
  invalid_shortcut: 'error.app.invalid_shortcut',
  shortcut_unavailable: 'error.app.shortcut_unavailable',
  shortcut_conflict: 'error.app.shortcut_conflict',
  not_recording: 'error.app.not_recording',
  tts_unavailable: 'error.app.tts_unavailable',
  tts_failed: 'error.app.tts_failed',
  capture_denied: 'error.app.capture_denied',
  capture_failed: 'error.app.capture_failed',
  empty: 'error.code.empty',
  too_long: 'error.code.too_long',
  capability_off: 'error.code.capability_off',
  too_big: 'error.code.too_big',
  bad_frame: 'error.code.bad_frame',
  unknown_card: 'error.code.unknown_card',
  already_answered: 'error.code.already_answered',
  not_an_option: 'error.code.not_an_option',
  no_answer: 'error.code.no_answer',
  id_in_use: 'error.code.id_in_use',
  wrong_dialect: 'error.code.wrong_dialect',
  file_unreadable: 'error.code.file_unreadable',
  not_a_file: 'error.code.not_a_file',
  engine_stopped: 'error.code.engine_stopped',
  bad_command: 'error.code.bad_command',
  not_sent: 'error.code.not_sent',
  cancelled: 'error.code.cancelled',
  file_too_large: 'error.code.file_too_large',
  upload_failed: 'error.code.upload_failed',
};

/** Every `AppError.code` (the generated `ErrorCode` union). */
export const APP_ERROR_CODES = Object.keys(APP_ERROR_KEYS) as readonly ErrorCode[];

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
] as const satisfies readonly ErrorCode[];

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
  'media_quota_full',
  // received media (media.rs)
  'bad_frame',
  'bad_base64',
  'too_many_unfinished',
  'media_buffer_full',
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
  ...new Set<string>([...APP_ERROR_CODES, ...REFUSAL_CODES, ...ENGINE_ERROR_CODES, ...AGENT_ERROR_CODES]),
];

function has(key: string): key is MessageKey {
  return key in en;
}

/** The sentence for an error attached to a message or shown as a notice (`error`/`rejected` events), or `null` for a
 *  code nobody listed (an agent's own). */
export function eventErrorText(code: string): string | null {
  const key = `error.code.${code}`;
  return has(key) ? t(key) : null;
}

/** The sentence for a failed call to the shell (`AppError.code`); a code nobody listed (a newer backend) gets a
 *  general sentence. */
export function appErrorText(code: string): string {
  const key = Object.hasOwn(APP_ERROR_KEYS, code) ? APP_ERROR_KEYS[code as ErrorCode] : undefined;
  if (key) return t(key);
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
