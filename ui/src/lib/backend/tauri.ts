import { Channel, invoke } from '@tauri-apps/api/core';
import type { Backend } from './backend';
import { toBackendError } from './backend';
import type {
  AppInfo,
  Command,
  Conversation,
  EngineEvent,
  ExportFormat,
  FileDropEvent,
  FileInfo,
  HistoryPage,
  Profile,
  ProfileInput,
  SearchHit,
  SendResult,
  UpdateCheck,
} from './types';

async function call<T>(cmd: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(cmd, args);
  } catch (e) {
    throw toBackendError(e);
  }
}

/** The production backend: Tauri commands (`invoke`) and an event `Channel` per connected profile. */
export class TauriBackend implements Backend {
  private channels = new Map<string, Channel<EngineEvent>>();

  appInfo() {
    return call<AppInfo>('app_info');
  }
  listProfiles() {
    return call<Profile[]>('list_profiles');
  }
  createProfile(input: ProfileInput) {
    return call<Profile>('create_profile', { input });
  }
  updateProfile(id: string, input: ProfileInput) {
    return call<Profile>('update_profile', { id, input });
  }
  deleteProfile(id: string) {
    return call<void>('delete_profile', { id });
  }
  setToken(profileId: string, token: string, sessionOnly: boolean) {
    return call<void>('set_token', { profileId, token, sessionOnly });
  }
  deleteToken(profileId: string) {
    return call<void>('delete_token', { profileId });
  }

  async connect(profileId: string, onEvent: (ev: EngineEvent) => void) {
    const channel = new Channel<EngineEvent>();
    channel.onmessage = onEvent;
    this.channels.set(profileId, channel);
    await call<void>('connect', { profileId, onEvent: channel });
  }
  async disconnect(profileId: string) {
    await call<void>('disconnect', { profileId });
    const ch = this.channels.get(profileId);
    if (ch) ch.onmessage = () => {};
    this.channels.delete(profileId);
  }
  sendCommand(profileId: string, command: Command) {
    return call<SendResult>('send_command', { profileId, command });
  }

  listConversations(profileId: string) {
    return call<Conversation[]>('list_conversations', { profileId });
  }
  createConversation(profileId: string, title: string) {
    return call<Conversation>('create_conversation', { profileId, title });
  }
  renameConversation(id: string, title: string) {
    return call<void>('rename_conversation', { id, title });
  }
  deleteConversation(id: string) {
    return call<void>('delete_conversation', { id });
  }
  history(conversationId: string, limit: number, before?: string) {
    return call<HistoryPage>('history', { conversationId, before, limit });
  }
  search(query: string, profileId?: string) {
    return call<SearchHit[]>('search', { query, profileId });
  }
  exportConversation(id: string, format: ExportFormat) {
    return call<void>('export_conversation', { id, format });
  }

  openLogsFolder() {
    return call<void>('open_logs_folder');
  }
  openExternal(url: string) {
    return call<void>('open_external', { url });
  }
  revealFile(path: string) {
    return call<void>('reveal_file', { path });
  }
  saveFileAs(path: string) {
    return call<void>('save_file_as', { path });
  }
  pickFiles() {
    return call<string[]>('pick_files');
  }
  fileUrl(path: string) {
    return call<string>('file_url', { path });
  }
  downscaleImage(path: string, maxBytes: number) {
    return call<string>('downscale_image', { path, maxBytes });
  }
  openFile(path: string) {
    return call<void>('open_file', { path });
  }
  fileInfo(path: string) {
    return call<FileInfo>('file_info', { path });
  }
  writeTempFile(filename: string, base64: string) {
    return call<string>('write_temp_file', { filename, base64 });
  }
  notify(title: string, body: string) {
    return call<void>('notify', { title, body });
  }
  checkForUpdates() {
    return call<UpdateCheck>('check_for_updates');
  }
  installUpdate() {
    return call<UpdateCheck>('install_update');
  }

  onConnectLink(handler: (link: { url: string; name?: string }) => void): () => void {
    let unlisten: (() => void) | null = null;
    let cancelled = false;
    import('@tauri-apps/api/event')
      .then(({ listen }) => listen<{ url: string; name?: string }>('deep-link-connect', (e) => handler(e.payload)))
      .then((u) => {
        if (cancelled) u();
        else unlisten = u;
      })
      .catch(() => {
        /* not in a Tauri webview */
      });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }

  onFileDrop(handler: (ev: FileDropEvent) => void): () => void {
    let unlisten: (() => void) | null = null;
    let cancelled = false;
    import('@tauri-apps/api/webview')
      .then(({ getCurrentWebview }) =>
        getCurrentWebview().onDragDropEvent((e) => {
          const p = e.payload;
          if (p.type === 'enter') handler({ type: 'enter', paths: p.paths });
          else if (p.type === 'over') handler({ type: 'over' });
          else if (p.type === 'drop') handler({ type: 'drop', paths: p.paths });
          else handler({ type: 'leave' });
        }),
      )
      .then((u) => {
        if (cancelled) u();
        else unlisten = u;
      })
      .catch(() => {
        /* not in a Tauri webview (tests): no native drops */
      });
    return () => {
      cancelled = true;
      unlisten?.();
    };
  }
}
