import { commands, type AppError, type Result } from '../../bindings';
import type { DeepLinkConnect, EngineEvent, FileDropEvent } from './types';
import type { OpenConversation } from '../../bindings';
import { appErrorText } from '../errors';

type Commands = typeof commands;

/** A generated command's answer: `Result<T, AppError>` unwrapped to `T` (its error is thrown as a BackendError);
 *  a command that cannot fail answers its value as it is. Rust's `()` (`null`) is `void`. */
type Unwrapped<R> = Unit<[R] extends [Result<infer T, AppError>] ? T : R>;
type Unit<T> = [T] extends [null] ? void : T;

/** Every command of `src/bindings.ts` under its generated name and the Rust function's argument order, answering a
 *  plain promise that rejects with a BackendError. */
export type GeneratedCommands = {
  [K in keyof Commands]: Commands[K] extends (...args: infer A) => Promise<infer R>
    ? (...args: A) => Promise<Unwrapped<R>>
    : never;
};

/** What the UI adds by hand to the generated commands. */
export interface BackendExtras {
  /** Starts the profile's engine; its events arrive on `onEvent` (streamed replies joined back into whole
   *  `message` events, stream.ts) until `disconnect`. */
  connect(profileId: string, onEvent: (ev: EngineEvent) => void): Promise<void>;
  /** Native file drag & drop onto the window. Returns an unsubscribe function. */
  onFileDrop(handler: (ev: FileDropEvent) => void): () => void;
  /** A `hermes://connect?url=…` link opened the app: prefill a new profile (never carries a token). */
  onConnectLink(handler: (link: DeepLinkConnect) => void): () => void;
  /** The shell asks the page to open a conversation (a notification or the tray was clicked). */
  onOpenConversation(handler: (open: OpenConversation) => void): () => void;
  /** The capture shortcut was pressed while the Quick Ask panel is on screen (its page then asks
   *  `quickTakeCapture`). */
  onCaptureRequested(handler: () => void): () => void;
}

/** The UI's only door to the Rust shell: the generated commands plus {@link BackendExtras}. */
export type Backend = Omit<GeneratedCommands, keyof BackendExtras> & BackendExtras;

/** The answer of a generated command that returns `Result`: `{status: 'ok', data}` or `{status: 'error', error}`. */
function isResult(r: unknown): r is Result<unknown, AppError> {
  if (typeof r !== 'object' || r === null) return false;
  const o = r as { status?: unknown };
  return (o.status === 'ok' && 'data' in o) || (o.status === 'error' && 'error' in o);
}

// A command that cannot fail must not answer something that looks like a `Result` (the runtime could not tell them
// apart): this fails `tsc` if one does.
type LooksLikeResult<R> = [Extract<R, { status: 'ok' | 'error' }>] extends [never] ? false : true;
type AmbiguousCommand = {
  [K in keyof Commands]: Commands[K] extends (...args: never[]) => Promise<infer R>
    ? [R] extends [Result<unknown, AppError>]
      ? never
      : LooksLikeResult<R> extends true
        ? K
        : never
    : never;
}[keyof Commands];
const noAmbiguousCommand: [AmbiguousCommand] extends [never] ? true : false = true;
void noAmbiguousCommand;

/** Calls a generated command: its value, or a BackendError for its `AppError` or a failed IPC. */
async function unwrap(p: Promise<unknown>): Promise<unknown> {
  let r: unknown;
  try {
    r = await p;
  } catch (e) {
    throw toBackendError(e);
  }
  if (!isResult(r)) return r;
  if (r.status === 'error') throw toBackendError(r.error);
  return r.data;
}

/** The generated commands, each unwrapped ({@link GeneratedCommands}): built from `commands` itself, so a command
 *  added on the Rust side is here once the bindings are regenerated. */
export function generatedCommands(source: Record<string, (...args: never[]) => Promise<unknown>> = commands): GeneratedCommands {
  const out: Record<string, (...args: never[]) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(source)) out[name] = (...args: never[]) => unwrap(fn(...args));
  return out as GeneratedCommands;
}

/** A failed backend call: `code` says what failed (errors.ts has the sentence); `message` is English detail. */
export class BackendError extends Error {
  readonly code: AppError['code'];
  constructor(payload: AppError) {
    super(payload.message);
    this.name = 'BackendError';
    this.code = payload.code;
  }
}

export function isErrorPayload(e: unknown): e is AppError {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof (e as AppError).code === 'string' &&
    typeof (e as AppError).message === 'string'
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
