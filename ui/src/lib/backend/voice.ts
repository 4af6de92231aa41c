// The voice and avatar half of the backend, under the names the voice state uses: the generated commands
// (backend.ts: unwrapped, throwing BackendError) and events. `FakeVoiceBackend` (./voice-fake.ts) stands in for
// tests and the browser demo.
import { Channel } from '@tauri-apps/api/core';
import {
  events,
  type AvatarMethod,
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

export type { AvatarMethod, TtsEvent, TtsStatus, VoiceClip, VoiceDevices, VoiceEvent, VoiceMode, VoiceSendTo, VoiceSettings };

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
  ttsSpeak(text: string): Promise<number>;
  ttsStop(): Promise<void>;
  avatarDetach(open: boolean, clickThrough: boolean): Promise<void>;
  /** Opens the agent's avatar page in its own IPC-less window; false when unreachable (`null` closes it). */
  avatarRemote(url: string | null): Promise<boolean>;
  /** Calls the avatar in the detached/remote windows; the shell JSON-encodes `arg` into the script. */
  avatarCall(method: AvatarMethod, arg: string | number): Promise<void>;
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
  ttsSpeak(text: string) {
    return gen.ttsSpeak(text);
  }
  async ttsStop() {
    await gen.ttsStop();
  }
  async avatarDetach(open: boolean, clickThrough: boolean) {
    await gen.avatarDetach(open, clickThrough);
  }
  avatarRemote(url: string | null) {
    return gen.avatarRemote(url);
  }
  async avatarCall(method: AvatarMethod, arg: string | number) {
    await gen.avatarCall(method, arg);
  }
  onPushToTalk(handler: (pressed: boolean) => void) {
    return listen(events.pushToTalk, (p) => handler(p.pressed));
  }
  onTts(handler: (ev: TtsEvent) => void) {
    return listen(events.ttsEvent, handler);
  }
  onAvatarWindowClosed(handler: (label: string) => void) {
    return listen(events.avatarWindowClosed, (p) => handler(p.label));
  }
}
