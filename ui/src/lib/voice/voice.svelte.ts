// The voice hub: microphone (push-to-talk and hands-free), read-aloud, agent voice notes and the avatar's state.
// One per app window (the microphone is one), reached through context.
import { getContext, setContext } from 'svelte';
import type { Backend } from '../backend/backend';
import { toBackendError } from '../backend/backend';
import type { RemoteAvatar, TtsStatus, VoiceBackend, VoiceClip, VoiceEvent, VoiceSendTo, VoiceSettings } from '../backend/voice';
import { inTauri } from '../backend';
import { TauriVoiceBackend } from '../backend/voice';
import { FakeVoiceBackend } from '../backend/voice-fake';
import type { AppState } from '../state/app.svelte';
import { AvatarDriver, deriveState, syllableEnvelope } from './avatar';
import { speechText } from '../markdown/speech';
import { t } from '../i18n/index.svelte';

export type MicPhase = 'idle' | 'starting' | 'recording' | 'sending' | 'handsfree';

export interface VoiceTarget {
  profileId: string;
  /** The agent takes no voice messages (`ready.features.voice`): nothing is recorded. */
  voiceOff?: boolean;
  /** Hands-free: send an utterance (an `audio` command through the engine, with its echo). */
  send(clip: VoiceClip): Promise<unknown>;
  /** Push-to-talk: where the shell sends the clips itself on key-up (`voice_stop`), ids included. */
  route(): VoiceSendTo;
  /** The echo of a clip `voice_stop` sent (or refused: `clip.error`). */
  adopt(clip: VoiceClip): void;
  /** The stop is over (sent, refused or failed): forget the route's ids. */
  settle(route: VoiceSendTo): void;
}

export interface VoiceError {
  code: string;
  message: string;
}

const READ_ALOUD_KEY = 'hermes.voice.readAloud.v1';
const PROFILE_VOICE_KEY = 'hermes.voice.profiles.v1';

/** The bundled avatar's looks (its `setLook`), the first being its default. */
export const AVATAR_LOOKS = ['lilac', 'mint', 'sunset', 'ocean', 'graphite'] as const;

/** What one agent sounds and looks like: its read-aloud voice and rate (`null`: the settings'), its avatar's look. */
export interface ProfileVoice {
  ttsVoice?: string | null;
  ttsRate?: number | null;
  look?: string | null;
}
const AVATAR_KEY = 'hermes.voice.avatar.v1';

function loadJson<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    if (raw) return { ...fallback, ...(JSON.parse(raw) as T) };
  } catch {
    /* ignore */
  }
  return fallback;
}
function saveJson(key: string, v: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {
    /* private mode */
  }
}

export class VoiceHub {
  phase = $state<MicPhase>('idle');
  level = $state(0);
  startedAt = $state(0);
  /** Hands-free: the user is speaking now. */
  speech = $state(false);
  /** Hands-free: the microphone went away (the shell's message); listening resumes by itself when it is back. */
  micLost = $state<string | null>(null);
  /** Hands-free: the microphone is back, or another one took over (its name), for a few seconds. */
  micBack = $state<string | null>(null);
  private micBackTimer: ReturnType<typeof setTimeout> | null = null;
  error = $state<VoiceError | null>(null);
  settings = $state<VoiceSettings | null>(null);
  tts = $state<TtsStatus | null>(null);
  private ttsWarming = false;
  ttsSpeaking = $state(false);
  notesPlaying = $state(0);
  /** Read-aloud on/off per profile id (default off). */
  readAloud = $state<Record<string, boolean>>(loadJson(READ_ALOUD_KEY, {}));
  /** Per profile: its own voice, rate and avatar look. */
  profileVoices = $state<Record<string, ProfileVoice>>(loadJson(PROFILE_VOICE_KEY, {}));
  avatarPrefs = $state<{ detached: boolean; clickThrough: boolean }>(
    loadJson(AVATAR_KEY, { detached: false, clickThrough: false }),
  );
  /** What the avatar shows now (idle, thinking, speaking, listening…). */
  shown = $state('idle');
  /** The agent's own avatar page is showing in its window. */
  remoteAvatar = $state<string | null>(null);
  /** Where the agent's own avatar page stands: the shell's answer (open, ask, declined, blocked, closed). */
  remote = $state<RemoteAvatar>({ kind: 'closed' });
  private remoteKey: string | null = null;
  private remoteProfile: string | null = null;
  readonly avatar: AvatarDriver;
  /** The iframe of the bundled page (set by the avatar pane). */
  frame: HTMLIFrameElement | null = null;

  /** The page's window: the Quick Ask panel's page is kept while it is hidden, and stays silent then. */
  view: 'main' | 'quick' = 'main';
  private releaseAfterStart = false;
  private errorTimer: ReturnType<typeof setTimeout> | null = null;
  private notes = new Set<HTMLAudioElement>();
  private envelopeTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    public vb: VoiceBackend,
    private backend: Backend,
    /** Where a finished clip goes (the selected conversation), or null when nothing is open. */
    public target: () => VoiceTarget | null,
  ) {
    this.avatar = new AvatarDriver({
      frame: () => this.frame?.contentWindow,
      external: () => this.avatarPrefs.detached || this.remoteAvatar !== null,
      callExternal: (m, a) => void this.vb.avatarCall(m, a).catch(() => {}),
    });
  }

  get recording(): boolean {
    return this.phase === 'recording' || (this.phase === 'handsfree' && this.speech);
  }
  get speaking(): boolean {
    return this.ttsSpeaking || this.notesPlaying > 0;
  }
  get handsFree(): boolean {
    return this.phase === 'handsfree';
  }

  async load(): Promise<void> {
    try {
      this.settings = await this.vb.settings();
    } catch {
      /* defaults in the settings page */
    }
  }

  async loadTts(): Promise<TtsStatus> {
    try {
      this.tts = await this.vb.ttsStatus();
    } catch (e) {
      this.tts = { available: false, detail: toBackendError(e).message, voices: [] };
    }
    return this.tts;
  }

  async saveSettings(s: VoiceSettings): Promise<void> {
    this.settings = await this.vb.saveSettings(s);
  }

  private fail(e: unknown, transient = false): void {
    const err = toBackendError(e);
    this.error = { code: err.code, message: err.message };
    if (this.errorTimer) clearTimeout(this.errorTimer);
    if (transient) this.errorTimer = setTimeout(() => (this.error = null), 2500);
  }

  clearError(): void {
    this.error = null;
  }

  /** The capture now listened to: each start opens its own channel, and a stopped one's messages still in flight
   *  (a level measured just before the stop) must not reach the next capture's meter. */
  private capture = 0;

  /** A new capture's event handler; `retire()` silences it. */
  private listen(): (ev: VoiceEvent) => void {
    const id = ++this.capture;
    return (ev) => {
      if (id === this.capture) this.onEvent(ev);
    };
  }

  private retire(): void {
    this.capture++;
  }

  private onEvent = (ev: VoiceEvent): void => {
    switch (ev.kind) {
      case 'level':
        this.level = ev.level;
        if (this.recording) this.avatar.setVolume(ev.level);
        break;
      case 'speech_start':
        this.speech = true;
        break;
      case 'speech_end':
        this.speech = false;
        break;
      case 'barge_in':
        this.bargeIn();
        break;
      case 'utterance':
        this.speech = false;
        void this.deliver(ev.clips);
        break;
      case 'error':
        this.phase = 'idle';
        this.level = 0;
        this.speech = false;
        this.fail({ code: ev.code, message: ev.message });
        break;
      case 'mic_lost':
        this.level = 0;
        this.speech = false;
        this.setMicBack(null);
        this.micLost = ev.message;
        break;
      case 'mic_back':
        this.micLost = null;
        this.setMicBack(ev.device);
        break;
      case 'stopped':
        // the tray's "Stop listening"
        this.phase = 'idle';
        this.level = 0;
        this.speech = false;
        this.micLost = null;
        this.setMicBack(null);
        break;
    }
  };

  private setMicBack(device: string | null): void {
    if (this.micBackTimer) clearTimeout(this.micBackTimer);
    this.micBackTimer = null;
    this.micBack = device;
    if (device !== null) this.micBackTimer = setTimeout(() => (this.micBack = null), 4000);
  }

  private async deliver(clips: VoiceClip[]): Promise<void> {
    const t = this.target();
    if (!t) return;
    for (const c of clips) await t.send(c).catch((e) => this.fail(e));
  }

  /* ---------- push-to-talk ---------- */

  /** Button or shortcut pressed. */
  async press(): Promise<void> {
    if (this.phase !== 'idle') return;
    const target = this.target();
    if (!target) return;
    // (the push-to-talk shortcut works from anywhere: the refusal shows by the mic for a moment)
    if (target.voiceOff) return this.fail({ code: 'voice_off', message: '' }, true);
    this.error = null;
    this.releaseAfterStart = false;
    this.phase = 'starting';
    this.stopSpeaking(); // talking over the agent stops its voice
    try {
      await this.vb.start('push_to_talk', this.listen());
    } catch (e) {
      this.phase = 'idle';
      this.fail(e);
      return;
    }
    if (this.phase !== 'starting') return; // cancelled meanwhile
    this.phase = 'recording';
    this.startedAt = Date.now();
    if (this.releaseAfterStart) await this.release();
  }

  /** Button or shortcut released: send. The shell stops, writes the WAV and hands it to the engine in one call; the
   *  echo follows (key-up → `audio` frame has no round trip through the page). */
  async release(): Promise<void> {
    if (this.phase === 'starting') {
      this.releaseAfterStart = true;
      return;
    }
    if (this.phase !== 'recording') return;
    this.phase = 'sending';
    this.retire();
    this.level = 0;
    // No target (the conversation went away meanwhile): the recording ends unsent.
    const t = this.target();
    const route = t?.route();
    try {
      const clips = await this.vb.stop(route);
      this.phase = 'idle';
      for (const c of clips) t?.adopt(c);
    } catch (e) {
      this.phase = 'idle';
      this.fail(e, toBackendError(e).code === 'too_short');
    } finally {
      if (route) t?.settle(route);
    }
  }

  /** Esc: stop without sending. */
  async cancel(): Promise<void> {
    if (this.phase === 'idle' || this.phase === 'sending') return;
    this.phase = 'idle';
    this.retire();
    this.level = 0;
    this.speech = false;
    await this.vb.cancel().catch(() => {});
  }

  /* ---------- hands-free ---------- */

  async setHandsFree(on: boolean): Promise<void> {
    if (on === this.handsFree) return;
    if (on) {
      if (this.phase !== 'idle') await this.cancel();
      const target = this.target();
      if (!target) return;
      if (target.voiceOff) return this.fail({ code: 'voice_off', message: '' }, true);
      this.error = null;
      this.phase = 'starting';
      try {
        await this.vb.start('hands_free', this.listen());
        this.phase = 'handsfree';
        this.startedAt = Date.now();
      } catch (e) {
        this.phase = 'idle';
        this.fail(e);
      }
    } else {
      this.phase = 'idle';
      this.retire();
      this.level = 0;
      this.speech = false;
      this.micLost = null;
      this.setMicBack(null);
      await this.vb.stop().catch(() => {});
    }
  }

  /* ---------- the agent's voice ---------- */

  readAloudOn(profileId: string): boolean {
    return !!this.readAloud[profileId];
  }

  setReadAloud(profileId: string, on: boolean): void {
    this.readAloud = { ...this.readAloud, [profileId]: on };
    saveJson(READ_ALOUD_KEY, this.readAloud);
    if (on) this.warmTts();
    else this.stopSpeaking();
  }

  voiceOf(profileId: string): ProfileVoice {
    return this.profileVoices[profileId] ?? {};
  }

  setVoiceOf(profileId: string, patch: ProfileVoice): void {
    this.profileVoices = { ...this.profileVoices, [profileId]: { ...this.voiceOf(profileId), ...patch } };
    saveJson(PROFILE_VOICE_KEY, this.profileVoices);
    if (this.target()?.profileId === profileId) this.showLookOf(profileId);
  }

  /** The avatar takes the look of the agent on screen: its colour theme, and its picture if the user chose one. */
  showLookOf(profileId: string | null): void {
    this.lookOf = profileId;
    const look = (profileId && this.voiceOf(profileId).look) || AVATAR_LOOKS[0];
    this.avatar.setLook(look);
    if (!profileId) return this.avatar.setImage(null);
    if (profileId in this.pictures) return this.avatar.setImage(this.pictures[profileId]);
    void this.pictureOf(profileId).then((url) => {
      if (this.lookOf === profileId) this.avatar.setImage(url);
    });
  }

  /** A profile's picture, asked of the shell once. */
  async pictureOf(profileId: string): Promise<string | null> {
    if (profileId in this.pictures) return this.pictures[profileId];
    const url = await this.vb.avatarPicture(profileId).catch(() => null);
    this.pictures = { ...this.pictures, [profileId]: url };
    return url;
  }

  /** The profile whose look the avatar wears. */
  private lookOf: string | null = null;

  /** Per profile: the user's picture for its avatar (a data URL), once asked for; `null`: none. */
  pictures = $state<Record<string, string | null>>({});

  /** The user picks a picture for a profile's avatar (a file dialog); refused files throw with the reason. */
  async pickPicture(profileId: string): Promise<void> {
    const url = await this.vb.avatarPicturePick(profileId);
    if (url === null) return;
    this.pictures = { ...this.pictures, [profileId]: url };
    if (this.lookOf === profileId) this.avatar.setImage(url);
  }

  /** Back to the drawn avatar for a profile. */
  async clearPicture(profileId: string): Promise<void> {
    await this.vb.avatarPictureClear(profileId);
    this.pictures = { ...this.pictures, [profileId]: null };
    if (this.lookOf === profileId) this.avatar.setImage(null);
  }

  /** Is read-aloud on for any profile (the speech engine will be needed)? */
  get readAloudAnywhere(): boolean {
    return Object.values(this.readAloud).some(Boolean);
  }

  /**
   * Connect to the system's speech engine ahead of the first reply read aloud (speech-dispatcher may have to start
   * first). Only when read-aloud is in use: connecting lists the engine's voices, which took ~1 s of CPU here.
   */
  warmTts(): void {
    if (!this.tts && !this.ttsWarming) {
      this.ttsWarming = true;
      void this.loadTts().finally(() => (this.ttsWarming = false));
    }
  }

  /** A final reply: the avatar shows it; read aloud when on for that profile. */
  onReply(profileId: string, markdown: string): void {
    // The avatar and the voice are the agent on screen's: another agent's reply waits, counted in the sidebar.
    if (this.target()?.profileId !== profileId) return;
    // The words, not the markdown: no `**`, backticks or link targets in the bubble or in the voice.
    const text = speechText(markdown, t('voice.codeBlock'));
    if (!text) return;
    this.avatar.speak(text);
    if (!this.readAloudOn(profileId)) return;
    const own = this.voiceOf(profileId);
    this.vb.ttsSpeak(text, own.ttsVoice ?? null, own.ttsRate ?? null).catch(() => {
      /* TTS unavailable: the settings page says so; nothing else changes */
    });
  }

  /** An approval or question card: the avatar asks it in its bubble (its last reply would otherwise stay there, as if
   *  that were what waits for an answer). Not read aloud: the card is on screen and may hold a command. */
  onCard(profileId: string, text: string): void {
    if (this.target()?.profileId !== profileId) return;
    const line = text.trim();
    if (line) this.avatar.speak(line);
  }

  onTts(state: string): void {
    this.ttsSpeaking = state === 'started';
  }

  /** An agent voice note: played (when read-aloud is on for the profile) with the avatar speaking. */
  async onVoiceNote(profileId: string, path: string): Promise<void> {
    if (this.target()?.profileId !== profileId || !this.readAloudOn(profileId) || this.recording) return;
    // the hidden panel kept for the next press shows the same conversation as the main window: only one plays it
    if (this.view === 'quick' && typeof document !== 'undefined' && document.visibilityState === 'hidden') return;
    try {
      const url = await this.backend.fileUrl(path);
      const a = new Audio(url);
      this.trackNote(a);
      await a.play();
    } catch {
      /* autoplay refused or file gone: the note is still in the chat */
    }
  }

  /** Any <audio> of an agent voice note (auto-played or played in the chat) makes the avatar speak. */
  trackNote(a: HTMLAudioElement): void {
    const on = () => {
      if (!this.notes.has(a)) {
        this.notes.add(a);
        this.notesPlaying = this.notes.size;
      }
    };
    const off = () => {
      if (this.notes.delete(a)) this.notesPlaying = this.notes.size;
    };
    a.addEventListener('play', on);
    a.addEventListener('pause', off);
    a.addEventListener('ended', off);
  }

  /** Barge-in: the user speaks — read-aloud and voice notes stop at once. */
  bargeIn(): void {
    this.stopSpeaking();
  }

  stopSpeaking(): void {
    if (this.ttsSpeaking) void this.vb.ttsStop().catch(() => {});
    this.ttsSpeaking = false;
    for (const a of [...this.notes]) a.pause();
  }

  /* ---------- avatar ---------- */

  /** Push the derived state to the avatar and run the lip-sync envelope while the agent speaks. */
  sync(protocol: string, typing: boolean, more: { waiting?: boolean; error?: boolean } = {}): string {
    const state = deriveState({
      protocol,
      typing,
      listening: this.recording,
      speaking: this.speaking,
      waiting: more.waiting,
      error: more.error || this.micLost !== null,
      micOpen: this.handsFree && this.micLost === null,
    });
    this.shown = state;
    this.avatar.setState(state);
    if (state === 'speaking' && !this.envelopeTimer) {
      const t0 = Date.now();
      this.envelopeTimer = setInterval(() => this.avatar.setSpeechLevel(syllableEnvelope(Date.now() - t0)), 40);
    } else if (state !== 'speaking' && this.envelopeTimer) {
      clearInterval(this.envelopeTimer);
      this.envelopeTimer = null;
      this.avatar.setSpeechLevel(0);
    }
    return state;
  }

  async setDetached(on: boolean): Promise<void> {
    this.avatarPrefs = { ...this.avatarPrefs, detached: on };
    saveJson(AVATAR_KEY, this.avatarPrefs);
    try {
      await this.vb.avatarDetach(on, this.avatarPrefs.clickThrough);
      if (on) setTimeout(() => this.avatar.replay(), 400);
    } catch (e) {
      this.avatarPrefs = { ...this.avatarPrefs, detached: false };
      this.fail(e);
    }
  }

  async setClickThrough(on: boolean): Promise<void> {
    this.avatarPrefs = { ...this.avatarPrefs, clickThrough: on };
    saveJson(AVATAR_KEY, this.avatarPrefs);
    if (this.avatarPrefs.detached) await this.vb.avatarDetach(true, on).catch(() => {});
  }

  /** `ready.avatar_url` or the profile's override, for profile `profileId`. The shell decides (https or loopback, the
   *  user's remembered answer for its origin): open in its own private IPC-less window, or the pane asks, or says it
   *  is blocked; the bundled page meanwhile. Nothing reaches the page's host before the user allows it. */
  async useRemote(profileId: string | null, url: string | null): Promise<void> {
    const key = profileId && url ? `${profileId} ${url}` : null;
    if (key === this.remoteKey) return;
    this.remoteKey = key;
    this.remoteProfile = key ? profileId : null;
    try {
      const r = await this.vb.avatarRemote(profileId ?? '', key ? url : null);
      if (key !== this.remoteKey) return; // a newer request won
      this.remote = r;
      this.remoteAvatar = r.kind === 'open' ? url : null;
      if (r.kind === 'open') setTimeout(() => this.avatar.replay(), 600);
    } catch {
      if (key !== this.remoteKey) return;
      this.remote = { kind: 'closed' };
      this.remoteAvatar = null;
    }
  }

  /** The user's answer in the pane (`true` show it, `false` not now, `null` forget): remembered by the shell for this
   *  profile and origin, then the page is asked for again. */
  async answerRemote(answer: boolean | null): Promise<void> {
    const r = this.remote;
    const pid = this.remoteProfile;
    const key = this.remoteKey;
    if (!pid || !key || !('origin' in r) || !r.origin) return;
    const consent = answer === null ? null : answer ? 'allowed' : 'declined';
    await this.vb.avatarConsent(pid, r.origin, consent);
    this.remoteKey = null;
    await this.useRemote(pid, key.slice(pid.length + 1));
  }

  /** Settings: forget an answer; the page showing now (or asked about) is asked for again. */
  async forgetRemote(profileId: string, origin: string): Promise<void> {
    await this.vb.avatarConsent(profileId, origin, null);
    const key = this.remoteKey;
    if (key && this.remoteProfile === profileId) {
      this.remoteKey = null;
      await this.useRemote(profileId, key.slice(profileId.length + 1));
    }
  }

  windowClosed(label: string): void {
    if (label === 'avatar' && this.avatarPrefs.detached) {
      this.avatarPrefs = { ...this.avatarPrefs, detached: false };
      saveJson(AVATAR_KEY, this.avatarPrefs);
    }
    if (label === 'avatar-remote') {
      // closed by the user: the bundled avatar until the page is announced again
      this.remoteAvatar = null;
      if (this.remote.kind === 'open') this.remote = { kind: 'closed' };
    }
  }

  dispose(): void {
    if (this.envelopeTimer) clearInterval(this.envelopeTimer);
    if (this.errorTimer) clearTimeout(this.errorTimer);
  }
}

const KEY = Symbol('voice');
export function setVoice(v: VoiceHub): VoiceHub {
  setContext(KEY, v);
  return v;
}
export function getVoice(): VoiceHub | null {
  return getContext<VoiceHub | undefined>(KEY) ?? null;
}

/** The hub for this app: Tauri in the app, the in-memory fake in a plain browser (dev) and in tests. */
export function createVoiceHub(app: AppState, backend: Backend, vb?: VoiceBackend): VoiceHub {
  const v = vb ?? (inTauri() ? new TauriVoiceBackend() : new FakeVoiceBackend((pid, cmd) => backend.sendCommand(pid, cmd)));
  const hub = new VoiceHub(v, backend, () => {
    const s = app.currentSession;
    const sel = app.selection;
    if (!s || !sel) return null;
    const conversationId = sel.conversationId;
    return {
      profileId: s.profile.id,
      voiceOff: !s.features.voice,
      send: (clip) => s.sendVoice(conversationId, clip),
      route: () => s.voiceRoute(conversationId),
      adopt: (clip) => void s.adoptVoice(conversationId, clip),
      settle: (route) => s.settleVoice(route),
    };
  });
  hub.view = app.view;
  return hub;
}
