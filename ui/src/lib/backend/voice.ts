// The voice and avatar half of the backend, under the names the voice state uses: the generated commands
// (backend.ts: unwrapped, throwing BackendError) and events. `FakeVoiceBackend` (./voice-fake.ts) stands in for
// tests and the browser demo.
import { Channel } from '@tauri-apps/api/core';
import { here } from './here';
import {
  events,
  type AvatarConsent,
  type AvatarMethod,
  type Consent,
  type RemoteAvatar,
  type TtsEvent,
  type TtsStatus,
  type VoiceClip,
  type VoiceDevices,
  type VoiceEvent,
  type VoiceMode,
  type VoiceSendTo,
  type VoiceSettings,
} from '../../bindings';
import { generatedCommands } from './backend';

export type { AvatarConsent, AvatarMethod, Consent, RemoteAvatar, TtsEvent, TtsStatus, VoiceClip, VoiceDevices, VoiceEvent, VoiceMode, VoiceSendTo, VoiceSettings };

export interface VoiceBackend {
  devices(): Promise<VoiceDevices>;
  settings(): Promise<VoiceSettings>;
  saveSettings(s: VoiceSettings): Promise<VoiceSettings>;
  /** Starts the microphone; levels (~30/s), hands-free utterances and errors arrive on `onEvent`. Resolves to the device name. */
  start(mode: VoiceMode, onEvent: (ev: VoiceEvent) => void): Promise<string>;
  /** Push-to-talk: the finished clip(s) (≤ 8 MiB each), already sent as `audio` commands when `send` is given (each
   *  with its id, or its error). Throws `too_short` under 300 ms. */
  stop(send?: VoiceSendTo): Promise<VoiceClip[]>;
  cancel(): Promise<void>;
  ttsStatus(): Promise<TtsStatus>;
  /** Speak `text`; `voice`/`rate` are the agent's own (per profile), `null` for the settings'. */
  ttsSpeak(text: string, voice?: string | null, rate?: number | null): Promise<number>;
  ttsStop(): Promise<void>;
  avatarDetach(open: boolean, clickThrough: boolean): Promise<void>;
  /** The agent's avatar page of a profile: the shell opens it in its own private, IPC-less window only when the
   *  address rules pass and the user allowed its origin; otherwise it says why not (`null` closes it). */
  avatarRemote(profileId: string, url: string | null): Promise<RemoteAvatar>;
  /** The user's answer for an avatar page's origin of a profile (`null` forgets it: asked again). */
  avatarConsent(profileId: string, origin: string, consent: Consent | null): Promise<void>;
  /** The remembered answers of a profile. */
  avatarConsents(profileId: string): Promise<AvatarConsent[]>;
  /** Calls the avatar in the detached/remote windows; the shell JSON-encodes `arg` into the script. */
  avatarCall(method: AvatarMethod, arg: string | number): Promise<void>;
  /** A profile's avatar picture (a `data:image/…` URL), if the user chose one. */
  avatarPicture(profileId: string): Promise<string | null>;
  /** The user picks a picture for a profile's avatar (a file dialog): kept cropped and scaled; `null` if cancelled. */
  avatarPicturePick(profileId: string): Promise<string | null>;
  /** Back to the drawn avatar for a profile. */
  avatarPictureClear(profileId: string): Promise<void>;
  onPushToTalk(handler: (pressed: boolean) => void): () => void;
  onTts(handler: (ev: TtsEvent) => void): () => void;
  onAvatarWindowClosed(handler: (label: string) => void): () => void;
}

const gen = generatedCommands();

function listen<T>(ev: { listen: (cb: (e: { payload: T }) => void) => Promise<() => void> }, handler: (p: T) => void) {
  let stop: (() => void) | null = null;
  let dead = false;
  ev.listen((e) => handler(e.payload))
    .then((un) => {
      if (dead) un();
      else stop = un;
    })
    .catch(() => {});
  return () => {
    dead = true;
    stop?.();
  };
}

export class TauriVoiceBackend implements VoiceBackend {
  devices() {
    return gen.voiceDevices();
  }
  settings() {
    return gen.voiceSettings();
  }
  saveSettings(s: VoiceSettings) {
    return gen.voiceSaveSettings(s);
  }
  start(mode: VoiceMode, onEvent: (ev: VoiceEvent) => void) {
    const ch = new Channel<VoiceEvent>();
    ch.onmessage = onEvent;
    return gen.voiceStart(mode, ch);
  }
  stop(send?: VoiceSendTo) {
    return gen.voiceStop(send ?? null);
  }
  async cancel() {
    await gen.voiceCancel();
  }
  ttsStatus() {
    return gen.ttsStatus();
  }
  ttsSpeak(text: string, voice: string | null = null, rate: number | null = null) {
    return gen.ttsSpeak(text, voice, rate);
  }
  async ttsStop() {
    await gen.ttsStop();
  }
  async avatarDetach(open: boolean, clickThrough: boolean) {
    await gen.avatarDetach(open, clickThrough);
  }
  avatarRemote(profileId: string, url: string | null) {
    return gen.avatarRemote(profileId, url);
  }
  async avatarConsent(profileId: string, origin: string, consent: Consent | null) {
    await gen.avatarConsent(profileId, origin, consent);
  }
  avatarConsents(profileId: string) {
    return gen.avatarConsents(profileId);
  }
  async avatarCall(method: AvatarMethod, arg: string | number) {
    await gen.avatarCall(method, arg);
  }
  avatarPicture(profileId: string) {
    return gen.avatarPicture(profileId);
  }
  avatarPicturePick(profileId: string) {
    return gen.avatarPicturePick(profileId);
  }
  async avatarPictureClear(profileId: string) {
    await gen.avatarPictureClear(profileId);
  }
  onPushToTalk(handler: (pressed: boolean) => void) {
    return listen(here(events.pushToTalk), (p) => handler(p.pressed));
  }
  onTts(handler: (ev: TtsEvent) => void) {
    return listen(events.ttsEvent, handler);
  }
  onAvatarWindowClosed(handler: (label: string) => void) {
    return listen(events.avatarWindowClosed, (p) => handler(p.label));
  }
}
