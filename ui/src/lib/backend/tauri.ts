import { Channel } from '@tauri-apps/api/core';
import { commands, events, type AppError, type Result, type UiEvent } from '../../bindings';
import type { Backend } from './backend';
import { BackendError, toBackendError } from './backend';
import { BootData } from './boot';
import { StreamJoiner } from './stream';
import type { AppSettings, Command, DeepLinkConnect, EngineEvent, ExportFormat, FileDropEvent, ProfileInput } from './types';

/** Unwraps a generated command's `Result` (errors cross as `{code, message}`) into a value or a BackendError. */
async function call<T>(p: Promise<Result<T, AppError>>): Promise<T> {
  let r: Result<T, AppError>;
  try {
    r = await p;
  } catch (e) {
    throw toBackendError(e);
  }
  if (r.status === 'error') throw new BackendError(r.error);
  return r.data;
}

async function done(p: Promise<Result<null, AppError>>): Promise<void> {
  await call(p);
}

/** A command that cannot fail on the Rust side: only the IPC itself can throw. */
function plain<T>(p: Promise<T>): Promise<T> {
  return p.catch((e: unknown) => {
    throw toBackendError(e);
  });
}

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

/** The production backend: Tauri commands (`invoke`) and an event `Channel` per connected profile. */
export class TauriBackend implements Backend {
  private channels = new Map<string, Channel<UiEvent>>();
  /** The shell's start-up snapshot, answering the first calls below once (boot.ts). */
  private boot = new BootData();

  appInfo() {
    return plain(commands.appInfo());
  }
  listProfiles() {
    const boot = this.boot.profiles();
    return boot ? Promise.resolve(boot) : call(commands.listProfiles());
  }
  createProfile(input: ProfileInput) {
    return call(commands.createProfile(input));
  }
  updateProfile(id: string, input: ProfileInput) {
    return call(commands.updateProfile(id, input));
  }
  setPaired(profileId: string, paired: boolean) {
    return call(commands.setPaired(profileId, paired));
  }
  setHome(profileId: string, conversationId: string | null) {
    return call(commands.setHome(profileId, conversationId));
  }
  deleteProfile(id: string) {
    return done(commands.deleteProfile(id));
  }
  setToken(profileId: string, token: string, sessionOnly: boolean) {
    return done(commands.setToken(profileId, token, sessionOnly));
  }
  deleteToken(profileId: string) {
    return done(commands.deleteToken(profileId));
  }

  async connect(profileId: string, onEvent: (ev: EngineEvent) => void) {
    const channel = new Channel<UiEvent>();
    const joiner = new StreamJoiner();
    channel.onmessage = (ev) => onEvent(joiner.join(ev));
    this.channels.set(profileId, channel);
    await done(commands.connect(profileId, channel));
  }
  async disconnect(profileId: string) {
    await done(commands.disconnect(profileId));
    const ch = this.channels.get(profileId);
    if (ch) ch.onmessage = () => {};
    this.channels.delete(profileId);
  }
  sendCommand(profileId: string, command: Command) {
    return call(commands.sendCommand(profileId, command));
  }

  listConversations(profileId: string) {
    const boot = this.boot.conversations(profileId);
    return boot ? Promise.resolve(boot) : call(commands.listConversations(profileId));
  }
  createConversation(profileId: string, title: string) {
    return call(commands.createConversation(profileId, title));
  }
  renameConversation(id: string, title: string) {
    return done(commands.renameConversation(id, title));
  }
  getDraft(conversationId: string) {
    return call(commands.getDraft(conversationId));
  }
  markRead(conversationId: string) {
    return done(commands.markRead(conversationId));
  }
  setDraft(conversationId: string, text: string) {
    return done(commands.setDraft(conversationId, text));
  }
  deleteConversation(id: string) {
    return done(commands.deleteConversation(id));
  }
  history(conversationId: string, limit: number, before?: string) {
    const boot = this.boot.history(conversationId, limit, before);
    if (boot) return Promise.resolve(boot);
    return call(commands.history(conversationId, before ?? null, limit));
  }
  search(query: string, profileId?: string) {
    return call(commands.search(query, profileId ?? null));
  }
  exportConversation(id: string, format: ExportFormat) {
    return done(commands.exportConversation(id, format));
  }

  openLogsFolder() {
    return done(commands.openLogsFolder());
  }
  openExternal(url: string) {
    return done(commands.openExternal(url));
  }
  revealFile(path: string) {
    return done(commands.revealFile(path));
  }
  saveFileAs(path: string) {
    return done(commands.saveFileAs(path));
  }
  pickFiles() {
    return call(commands.pickFiles());
  }
  fileUrl(path: string) {
    return call(commands.fileUrl(path));
  }
  downscaleImage(path: string, maxBytes: number) {
    return call(commands.downscaleImage(path, maxBytes));
  }
  openFile(path: string) {
    return done(commands.openFile(path));
  }
  fileInfo(path: string) {
    return call(commands.fileInfo(path));
  }
  writeTempFile(filename: string, base64: string) {
    return call(commands.writeTempFile(filename, base64));
  }
  clipboardImage(filename: string) {
    return call(commands.clipboardImage(filename));
  }
  appSettings() {
    return plain(commands.appSettings());
  }
  appSaveSettings(settings: AppSettings) {
    return call(commands.appSaveSettings(settings));
  }
  notify(title: string, body: string) {
    return done(commands.notify(title, body));
  }
  checkForUpdates() {
    return plain(commands.checkForUpdates());
  }
  installUpdate() {
    return plain(commands.installUpdate());
  }

  onConnectLink(handler: (link: DeepLinkConnect) => void): () => void {
    return subscribe(() => events.deepLinkConnect.listen((e) => handler(e.payload)));
  }

  onFileDrop(handler: (ev: FileDropEvent) => void): () => void {
    return subscribe(() =>
      import('@tauri-apps/api/webview').then(({ getCurrentWebview }) =>
        getCurrentWebview().onDragDropEvent((e) => {
          const p = e.payload;
          if (p.type === 'enter') handler({ type: 'enter', paths: p.paths });
          else if (p.type === 'over') handler({ type: 'over' });
          else if (p.type === 'drop') handler({ type: 'drop', paths: p.paths });
          else handler({ type: 'leave' });
        }),
      ),
    );
  }
}
