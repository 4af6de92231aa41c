import { expect } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { TauriBackend } from '../lib/backend/tauri';
import { FakeShell } from '../lib/backend/fake';
import type { AppInfo, Conversation, Direction, EngineEvent, Features, HistoryPage, JsonValue, Profile, StoredMessage } from '../lib/backend/types';
import { AppState } from '../lib/state/app.svelte';

export type { Call } from '../lib/backend/fake';

export const PROFILE: Profile = {
  id: 'p1',
  name: 'Atlas',
  url: 'wss://agent.example.com/ws',
  dialect: 'adapter',
  deviceId: 'desktop-84b9042da9357a03',
  allowInsecureWs: false,
  hasToken: true,
  tokenSessionOnly: false,
  paired: false,
};

export const CONV: Conversation = {
  id: 'c1',
  profileId: 'p1',
  title: 'Atlas',
  session: 'mobile:desktop-84b9042da9357a03',
  updatedAt: Date.parse('2024-06-01T10:00:00Z'),
  unread: 0,
};

export interface IpcOptions {
  info?: Partial<AppInfo>;
  profiles?: Profile[];
  conversations?: Conversation[];
  history?: HistoryPage;
  handlers?: Record<string, (args: Record<string, unknown>) => unknown>;
}

/** Fakes the Rust shell through Tauri's own mockIPC (the browser demo's fake shell, without its demo agent); events go
 *  through the real Channel callback path. */
export function setupIpc(opts: IpcOptions = {}) {
  const shell = new FakeShell({
    info: opts.info,
    profiles: opts.profiles ?? [PROFILE],
    conversations: opts.conversations ?? [CONV],
    history: opts.history ?? { messages: [], cards: [] },
    handlers: opts.handlers,
  }).install();

  function emit(ev: EngineEvent) {
    shell.emit(ev);
  }

  function commands(name?: string) {
    return shell.calls
      .filter((c) => c.cmd === 'send_command')
      .map((c) => c.args.command as Record<string, unknown>)
      .filter((c) => !name || c.cmd === name);
  }

  return { calls: shell.calls, emit, commands, connected: () => shell.isConnected(), shell };
}

export async function renderApp(opts: IpcOptions = {}) {
  const ipc = setupIpc(opts);
  const backend = new TauriBackend();
  const app = new AppState(backend);
  const r = render(App, { props: { backend, app } });
  await app.start();
  await waitFor(() => expect(ipc.connected()).toBe(true));
  return { ...ipc, app, backend, ...r };
}

export async function ready(ipc: { emit: (e: EngineEvent) => void }, capabilities: Partial<Record<string, JsonValue>> = {}) {
  ipc.emit({ event: 'connecting', attempt: 1 });
  ipc.emit({ event: 'ready', session: 'mobile:desktop-84b9042da9357a03', capabilities, features: adapterFeatures(capabilities) });
}

/** The features the engine announces for these adapter capabilities (its A-3 rule, `Features::adapter` in
 *  crates/protocol/src/event.rs), for tests that fake the engine: off only for `media`/`audio: false` or a zero limit. */
export function adapterFeatures(caps: Partial<Record<string, JsonValue>> = {}): Features {
  const limit = caps.max_media_bytes;
  return {
    files: caps.media !== false && limit !== 0,
    voice: caps.audio !== false,
    max_file_bytes: typeof limit === 'number' && limit > 0 ? limit : 8 * 1024 * 1024,
  };
}

/** Wait for one animation frame (streamed edits are coalesced per frame). */
export function frame(): Promise<void> {
  return new Promise((r) => requestAnimationFrame(() => r()));
}

/** Queries inside the chat only (a conversation's newest text is also its line in the sidebar). */
export function chatLog() {
  return within(screen.getByRole('main'));
}

export function composer(): HTMLTextAreaElement {
  return screen.getByLabelText(/^Message to /) as HTMLTextAreaElement;
}

/** A final stored message as the shell's `history` returns it (`createdAt`: an ISO time, or ms since the epoch). */
export function storedMessage(id: string, direction: Direction, text: string, createdAt: string | number): StoredMessage {
  const ms = typeof createdAt === 'number' ? createdAt : Date.parse(createdAt);
  return { id, direction, text, final: true, state: direction === 'down' ? 'received' : 'delivered', createdAt: ms, attachments: [] };
}
