import { Channel } from '@tauri-apps/api/core';
import { events, type UiEvent } from '../../bindings';
import { generatedCommands, type Backend, type BackendExtras, type GeneratedCommands } from './backend';
import { BootData } from './boot';
import { StreamJoiner } from './stream';
import { here } from './here';
import type { DeepLinkConnect, EngineEvent, FileDropEvent } from './types';

/** Starts listening; the returned function stops it, also when called before the listener is in place. */
function subscribe(start: () => Promise<() => void>): () => void {
  let unlisten: (() => void) | null = null;
  let cancelled = false;
  start()
    .then((u) => {
      if (cancelled) u();
      else unlisten = u;
    })
    .catch(() => {
      /* not in a Tauri webview (tests): nothing to listen to */
    });
  return () => {
    cancelled = true;
    unlisten?.();
  };
}

/** The generated commands with the hand-written parts: an event `Channel` per connected profile (its streamed
 *  replies joined, stream.ts), the shell's start-up snapshot answering the first calls once (boot.ts), the window's
 *  file drops and deep links. Everything else is `commands` of src/bindings.ts as it is. */
export function tauriBackend(): Backend {
  const gen: GeneratedCommands = generatedCommands();
  const channels = new Map<string, Channel<UiEvent>>();
  const boot = new BootData();

  const extras: BackendExtras & Pick<Backend, 'disconnect' | 'listProfiles' | 'listConversations' | 'history'> = {
    async connect(profileId: string, onEvent: (ev: EngineEvent) => void) {
      const channel = new Channel<UiEvent>();
      const joiner = new StreamJoiner();
      channel.onmessage = (ev) => onEvent(joiner.join(ev));
      channels.set(profileId, channel);
      await gen.connect(profileId, channel);
    },
    async disconnect(profileId: string) {
      await gen.disconnect(profileId);
      const ch = channels.get(profileId);
      if (ch) ch.onmessage = () => {};
      channels.delete(profileId);
    },
    listProfiles() {
      const p = boot.profiles();
      return p ? Promise.resolve(p) : gen.listProfiles();
    },
    listConversations(profileId) {
      const c = boot.conversations(profileId);
      return c ? Promise.resolve(c) : gen.listConversations(profileId);
    },
    history(conversationId, cursor, limit) {
      const page = boot.history(conversationId, cursor, limit);
      return page ? Promise.resolve(page) : gen.history(conversationId, cursor, limit);
    },
    onConnectLink(handler: (link: DeepLinkConnect) => void): () => void {
      return subscribe(() => here(events.deepLinkConnect).listen((e) => handler(e.payload)));
    },
    onOpenConversation(handler) {
      return subscribe(() => here(events.openConversation).listen((e) => handler(e.payload)));
    },
    onCaptureRequested(handler) {
      return subscribe(() => here(events.captureRequested).listen(() => handler()));
    },
    // The webview's own drag events only move the overlay: the dropped files arrive from the shell's drop handler
    // as tokens (`files-dropped`, src-tauri/src/grants.rs), the only names of them the shell's commands take.
    onFileDrop(handler: (ev: FileDropEvent) => void): () => void {
      const stopOverlay = subscribe(() =>
        import('@tauri-apps/api/webview').then(({ getCurrentWebview }) =>
          getCurrentWebview().onDragDropEvent((e) => {
            const p = e.payload;
            if (p.type === 'enter' || p.type === 'over') handler({ type: p.type });
            else handler({ type: 'leave' });
          }),
        ),
      );
      const stopFiles = subscribe(() => here(events.filesDropped).listen((e) => handler({ type: 'drop', files: e.payload.files })));
      return () => {
        stopOverlay();
        stopFiles();
      };
    },
  };
  return { ...gen, ...extras };
}

/** `new TauriBackend()`: the same as {@link tauriBackend}. */
export interface TauriBackend extends Backend {}
export class TauriBackend {
  constructor() {
    Object.assign(this, tauriBackend());
  }
}
