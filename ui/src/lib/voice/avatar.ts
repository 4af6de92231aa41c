// Driving the avatar page (A-26…A-28). Every call is first encoded as { method, json } — the argument as JSON text,
// never spliced into script. The same-origin iframe of the bundled page gets `JSON.parse(json)` passed to its
// `window.hermesAvatar[method]`; the detached and remote windows get the value through `avatar_call`, where the shell
// JSON-encodes it again with serde_json into the evaluated script.
import type { AvatarMethod } from '../backend/voice';

export type { AvatarMethod };

export interface AvatarCall {
  method: AvatarMethod;
  /** The argument, JSON-encoded. */
  json: string;
}

const METHODS: readonly AvatarMethod[] = ['setState', 'speak', 'setVolume', 'setSpeechLevel', 'setLook', 'setImage'];

/** Encode one call; strings for setState/speak/setLook/setImage (`''`: no picture), a finite 0..1 number for the levels. */
export function encodeCall(method: AvatarMethod, arg: unknown): AvatarCall {
  if (!METHODS.includes(method)) throw new Error(`not an avatar method: ${String(method)}`);
  let v: string | number;
  if (method === 'setState' || method === 'speak' || method === 'setLook' || method === 'setImage')
    v = typeof arg === 'string' ? arg : String(arg ?? '');
  else {
    const n = typeof arg === 'number' && Number.isFinite(arg) ? arg : 0;
    v = Math.round(Math.min(1, Math.max(0, n)) * 1000) / 1000;
  }
  return { method, json: JSON.stringify(v) };
}

export function decodeArg(call: AvatarCall): string | number {
  return JSON.parse(call.json) as string | number;
}

interface AvatarApi {
  [k: string]: unknown;
}

/** Apply a call to a window holding the page (the iframe's contentWindow). A missing page or a throwing one is ignored. */
export function applyToWindow(win: Window | null | undefined, call: AvatarCall): boolean {
  try {
    const api = (win as unknown as { hermesAvatar?: AvatarApi } | null | undefined)?.hermesAvatar;
    const fn = api?.[call.method];
    if (typeof fn !== 'function') return false;
    (fn as (a: unknown) => void).call(api, decodeArg(call));
    return true;
  } catch {
    return false;
  }
}

/** The class on the bundled avatar page's root under which its own style sheet holds every loop still (avatar.css). */
export const UNWATCHED_CLASS = 'hermes-unwatched';

/**
 * Hold the page's looping animations still (or let them go again) while nobody looks: the bundled avatar's idle
 * breathing repaints continuously, measured ~42 % of a core in the WebKit web process under Xvfb's software rendering.
 * Done with a class on the page's root that its style sheet answers, not with the Web Animations API: a CSS animation
 * once paused or played by a script no longer follows its style, so giving the loops back with `play()` kept an avatar
 * that had come to rest meanwhile (its own `.resting`, avatar.js) repainting every frame, for as long as the window
 * lived (a third of a core in the bench). Returns whether anything changed; a page that is gone (or of another origin:
 * no document) is left alone.
 */
export function setUnwatched(doc: Document | null | undefined, unwatched: boolean): boolean {
  try {
    const root = doc?.documentElement;
    if (!root || root.classList.contains(UNWATCHED_CLASS) === unwatched) return false;
    root.classList.toggle(UNWATCHED_CLASS, unwatched);
    return true;
  } catch {
    return false;
  }
}

export interface AvatarInputs {
  /** `avatar` frames from the agent. */
  protocol: string;
  typing: boolean;
  /** The microphone is recording the user (push-to-talk, or hands-free speech). */
  listening: boolean;
  /** Read-aloud or an agent voice note is playing. */
  speaking: boolean;
  /** A card (approval or question) waits for the user's answer. */
  waiting?: boolean;
  /** The connection is lost or refused, or hands-free lost its microphone. */
  error?: boolean;
  /** Hands-free is on and hears: with nothing else going on, the avatar listens. */
  micOpen?: boolean;
}

/**
 * Which state the avatar shows. The user's own voice wins, then the agent's voice, then what is wrong (no
 * connection), then what the agent waits for (a card), then the agent's frames (`thinking`, or any state its own page
 * knows, such as the bundled page's `tool`), then typing.
 */
export function deriveState(i: AvatarInputs): string {
  if (i.listening) return 'listening';
  if (i.speaking) return 'speaking';
  if (i.error) return 'error';
  if (i.waiting) return 'waiting';
  const p = (i.protocol || 'idle').trim().toLowerCase();
  if (p !== 'idle') return p;
  if (i.typing) return 'thinking';
  if (i.micOpen) return 'listening';
  return 'idle';
}

/**
 * A speech-like envelope 0..1 at time `t` ms (syllables of ~180 ms grouped in words): read-aloud is played by the
 * shell or the system, and no samples of it reach the page, so lip-sync follows this instead of the real signal.
 */
export function syllableEnvelope(t: number): number {
  const syl = Math.floor(t / 180);
  const phase = (t % 180) / 180;
  const r = Math.abs(Math.sin(syl * 12.9898) * 43758.5453) % 1; // deterministic per syllable
  const word = Math.floor(syl / 4);
  const pause = Math.abs(Math.sin(word * 78.233) * 12345.678) % 1 < 0.2 && syl % 4 === 3;
  if (pause) return 0.05;
  return Math.max(0, Math.sin(Math.PI * phase)) * (0.45 + 0.55 * r);
}

export interface AvatarTargets {
  /** The embedded iframe's window (bundled page), when shown. */
  frame(): Window | null | undefined;
  /** Detached or remote windows are open: send through the shell too. */
  external(): boolean;
  callExternal(method: AvatarMethod, arg: string | number): void;
}

/** Sends calls to wherever the avatar lives, skipping repeats of the same state and thinning level updates. */
export class AvatarDriver {
  private lastState = '';
  /** A line the embedded page did not get (not loaded yet — at launch the history, with a card still waiting, is in
   *  before the avatar's iframe): said again when a page is ready (`replay`), if it is at most `UNSENT_MAX_MS` old. */
  private unsent: { text: string; at: number } | null = null;
  static readonly UNSENT_MAX_MS = 10_000;
  sent: AvatarCall[] = [];
  constructor(private targets: AvatarTargets) {}

  call(method: AvatarMethod, arg: unknown): AvatarCall {
    const c = encodeCall(method, arg);
    const delivered = applyToWindow(this.targets.frame(), c);
    if (method === 'speak') this.unsent = delivered ? null : { text: decodeArg(c) as string, at: Date.now() };
    if (this.targets.external()) this.targets.callExternal(c.method, decodeArg(c));
    if (this.sent.length > 200) this.sent.splice(0, 100);
    this.sent.push(c);
    return c;
  }

  setState(state: string): void {
    if (state === this.lastState) return;
    this.lastState = state;
    this.call('setState', state);
  }
  speak(text: string): void {
    this.call('speak', text);
  }
  setVolume(level: number): void {
    this.call('setVolume', level);
  }
  setSpeechLevel(level: number): void {
    this.call('setSpeechLevel', level);
  }
  private lastLook = '';
  /** The bundled page's colour theme for the agent on screen (pages without `setLook` ignore it). */
  setLook(look: string): void {
    if (look === this.lastLook) return;
    this.lastLook = look;
    this.call('setLook', look);
  }
  private lastImage = '';
  /** The user's picture for the agent on screen (a `data:image/…` URL; `null`: the drawn avatar). */
  setImage(url: string | null): void {
    const u = url ?? '';
    if (u === this.lastImage) return;
    this.lastImage = u;
    this.call('setImage', u);
  }
  /** A page (re)loaded: give it the current look, picture and state again, and a line it missed while loading. */
  replay(): void {
    const look = this.lastLook;
    this.lastLook = '';
    if (look) this.setLook(look);
    const image = this.lastImage;
    this.lastImage = '';
    if (image) this.setImage(image);
    const s = this.lastState;
    this.lastState = '';
    if (s) this.setState(s);
    const u = this.unsent;
    this.unsent = null;
    if (u && Date.now() - u.at <= AvatarDriver.UNSENT_MAX_MS) this.speak(u.text);
  }
}
