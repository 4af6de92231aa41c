// An in-memory VoiceBackend for tests and the browser demo: records every call, lets tests push events.
import { BackendError, toBackendError } from './backend';
import type { Command, SendResult } from './types';
import type {
  AvatarConsent,
  AvatarMethod,
  Consent,
  RemoteAvatar,
  TtsEvent,
  TtsStatus,
  VoiceBackend,
  VoiceClip,
  VoiceDevices,
  VoiceEvent,
  VoiceMode,
  VoiceSendTo,
  VoiceSettings,
} from './voice';

export class FakeVoiceBackend implements VoiceBackend {
  calls: { name: string; args: unknown[] }[] = [];
  settingsValue: VoiceSettings = {
    device: null,
    shortcut: 'CommandOrControl+Shift+Space',
    endSilenceMs: 600,
    ttsVoice: null,
    ttsRate: 1,
    echoCancellation: true,
    noiseSuppression: true,
  };
  ttsAvailable = true;
  /** What the next `stop()` does. */
  nextStop: VoiceClip[] | BackendError = [{ path: '/tmp/voice-1.wav', secs: 2.5, size: 80044, id: null, error: null }];
  startError: BackendError | null = null;
  startDelay = 0;
  onEvent: ((ev: VoiceEvent) => void) | null = null;
  /** The last capture's channel, kept after its stop: a Tauri channel still delivers what was sent before. */
  private lastChannel: ((ev: VoiceEvent) => void) | null = null;
  ptt = new Set<(pressed: boolean) => void>();
  tts = new Set<(ev: TtsEvent) => void>();
  closed = new Set<(label: string) => void>();
  /** The answers for avatar pages, by `profileId origin` (the shell keeps them in avatar-consent.json). */
  consents = new Map<string, Consent>();
  /** The host the fake agent's profile names (a page elsewhere is `foreign`). */
  agentHost = '127.0.0.1';

  /** `sender`: where `stop(send)` hands the clips, as the shell hands them to the engine (the browser demo passes the
   *  fake Backend's `sendCommand`); without it they are only given their ids. */
  constructor(private sender?: (profileId: string, cmd: Command) => Promise<SendResult>) {}

  private log(name: string, ...args: unknown[]) {
    this.calls.push({ name, args });
  }
  called(name: string) {
    return this.calls.filter((c) => c.name === name);
  }
  emit(ev: VoiceEvent) {
    this.onEvent?.(ev);
  }
  /** A message of the last capture still in flight when it stopped. */
  emitLate(ev: VoiceEvent) {
    this.lastChannel?.(ev);
  }

  async devices(): Promise<VoiceDevices> {
    this.log('devices');
    return {
      host: 'PulseAudio',
      devices: [
        { name: 'Built-in Microphone', id: 'pulse:builtin', isDefault: true },
        { name: 'USB Headset', id: 'pulse:usb', isDefault: false },
      ],
      selected: this.settingsValue.device,
      selectedMissing: false,
      error: null,
    };
  }
  async settings() {
    return { ...this.settingsValue };
  }
  async saveSettings(s: VoiceSettings) {
    this.log('saveSettings', s);
    this.settingsValue = { ...s };
    return { ...s };
  }
  async start(mode: VoiceMode, onEvent: (ev: VoiceEvent) => void) {
    this.log('start', mode);
    if (this.startDelay) await new Promise((r) => setTimeout(r, this.startDelay));
    if (this.startError) throw this.startError;
    this.onEvent = onEvent;
    this.lastChannel = onEvent;
    return 'Built-in Microphone';
  }
  async stop(send?: VoiceSendTo) {
    this.log('stop', send);
    this.onEvent = null;
    const r = this.nextStop;
    if (r instanceof BackendError) throw r;
    if (!send) return r;
    const out: VoiceClip[] = [];
    for (const [i, c] of r.entries()) {
      const id = send.ids[i] ?? `voice-${i}`;
      try {
        const res = await this.sender?.(send.profileId, { cmd: 'audio', path: c.path, id, session: send.session ?? undefined });
        out.push({ ...c, id: res?.id ?? id, error: null });
      } catch (e) {
        const err = toBackendError(e);
        out.push({ ...c, id, error: { code: err.code, message: err.message } });
      }
    }
    return out;
  }
  async cancel() {
    this.log('cancel');
    this.onEvent = null;
  }
  async ttsStatus(): Promise<TtsStatus> {
    return this.ttsAvailable
      ? { available: true, detail: null, voices: [{ id: 'en', name: 'English', language: 'en' }] }
      : { available: false, detail: 'speech-dispatcher is not installed', voices: [] };
  }
  async ttsSpeak(text: string, voice: string | null = null, rate: number | null = null) {
    this.log('ttsSpeak', text, voice, rate);
    if (!this.ttsAvailable) throw new BackendError({ code: 'tts_unavailable', message: 'no TTS' });
    return 1;
  }
  async ttsStop() {
    this.log('ttsStop');
  }
  async avatarDetach(open: boolean, clickThrough: boolean) {
    this.log('avatarDetach', open, clickThrough);
  }
  async avatarRemote(profileId: string, url: string | null): Promise<RemoteAvatar> {
    this.log('avatarRemote', profileId, url);
    if (url === null) return { kind: 'closed' };
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { kind: 'blocked', origin: null, reason: 'invalid' };
    }
    const loop = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && loop)) {
      return { kind: 'blocked', origin: u.origin, reason: u.protocol === 'http:' ? 'notSecure' : 'invalid' };
    }
    const c = this.consents.get(`${profileId} ${u.origin}`);
    const page = { origin: u.origin, agentHost: this.agentHost, foreign: u.hostname !== this.agentHost };
    if (c === 'allowed') return { kind: 'open', ...page };
    return { kind: c === 'declined' ? 'declined' : 'ask', ...page };
  }
  async avatarConsent(profileId: string, origin: string, consent: Consent | null) {
    this.log('avatarConsent', profileId, origin, consent);
    if (consent) this.consents.set(`${profileId} ${origin}`, consent);
    else this.consents.delete(`${profileId} ${origin}`);
  }
  async avatarConsents(profileId: string): Promise<AvatarConsent[]> {
    return [...this.consents]
      .filter(([k]) => k.startsWith(`${profileId} `))
      .map(([k, consent]) => ({ origin: k.slice(profileId.length + 1), consent }));
  }
  async avatarCall(method: AvatarMethod, arg: string | number) {
    this.log('avatarCall', method, arg);
  }
  /** Profile id → its picture's data URL. */
  pictures = new Map<string, string>();
  /** What the next picture dialog answers (`null`: cancelled; an Error: refused). */
  nextPick: string | null | Error = null;
  async avatarPicture(profileId: string) {
    return this.pictures.get(profileId) ?? null;
  }
  async avatarPicturePick(profileId: string) {
    this.log('avatarPicturePick', profileId);
    const p = this.nextPick;
    if (p instanceof Error) throw new BackendError({ code: 'invalid_input', message: p.message });
    if (p) this.pictures.set(profileId, p);
    return p;
  }
  async avatarPictureClear(profileId: string) {
    this.log('avatarPictureClear', profileId);
    this.pictures.delete(profileId);
  }
  onPushToTalk(h: (pressed: boolean) => void) {
    this.ptt.add(h);
    return () => this.ptt.delete(h);
  }
  onTts(h: (ev: TtsEvent) => void) {
    this.tts.add(h);
    return () => this.tts.delete(h);
  }
  onAvatarWindowClosed(h: (label: string) => void) {
    this.closed.add(h);
    return () => this.closed.delete(h);
  }
}
