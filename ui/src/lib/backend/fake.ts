// A fake Rust shell behind Tauri's own `mockIPC`: it answers the generated commands by name, as `invoke` hands them
// over, and delivers engine events through the real `Channel` callback path. The tests (src/test/helpers.ts) drive
// its events themselves; the browser demo (`npm run dev` outside Tauri) gives it the scripted demo agent
// (./demo-agent.ts). Never part of the production Tauri path.
import { mockIPC, mockWindows } from '@tauri-apps/api/mocks';
import type { InvokeArgs } from '@tauri-apps/api/core';
import type { UiEvent } from '../../bindings';
import type {
  AppError,
  AppInfo,
  AppSettings,
  Conversation,
  EngineCommand,
  FileInfo,
  HistoryPage,
  Profile,
  ProfileInput,
  SearchHit,
  SendResult,
  StoredMessage,
} from './types';

/** One call the page made, as `invoke` handed it over. */
export interface Call {
  cmd: string;
  args: Record<string, unknown>;
}

type Args = Record<string, unknown>;
export type Handler = (args: Args) => unknown;

/** What answers a connection's commands: the demo agent, or nothing (a test emits the events itself). */
export interface FakeAgent {
  connected(profileId: string): void;
  /** The answer to `send_command` (or a thrown `{code, message}`), `undefined` for the shell's default. */
  command(profileId: string, command: EngineCommand): SendResult | undefined;
}

export interface FakeShellOptions {
  info?: Partial<AppInfo>;
  profiles?: Profile[];
  conversations?: Conversation[];
  /** Answers every `history` call (else each conversation's stored messages, one page). */
  history?: HistoryPage;
  /** Commands answered by these instead (a thrown `{code, message}` is the command's error). */
  handlers?: Record<string, Handler>;
}

/** A file the fake shell knows: what `file_info` says about it, and the URL `file_url` gives for it. */
export interface FakeFile {
  info: FileInfo;
  url?: string;
}

/** What the fake shell says a file is, from its name alone (the real shell reads its bytes too): viewable for the
 *  real shell's allow-list of extensions. A test that needs a disguised file answers `file_type` itself. */
export function fakeFileType(path: string): { viewable: boolean; realMime: string; realExt?: string; nameExt: string } {
  const nameExt = /\.([^./\\]+)$/.exec(path)?.[1]?.toLowerCase() ?? '';
  const viewable = /^(png|jpe?g|gif|webp|bmp|mp3|wav|ogg|oga|opus|m4a|aac|flac|mp4|m4v|webm|mkv|mov|ogv|pdf|txt|md|log|csv)$/.test(nameExt);
  return { viewable, realMime: 'application/octet-stream', realExt: nameExt || undefined, nameExt };
}

export function appError(code: AppError['code'], message: string): AppError {
  return { code, message };
}

/** The IPC mock's internals; none once the test environment is torn down (a scripted reply's timer may still fire). */
const internals = () =>
  typeof window === 'undefined'
    ? undefined
    : (window as unknown as { __TAURI_INTERNALS__?: { runCallback?: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;

function runCallback(id: number, data: unknown): void {
  const run = internals()?.runCallback;
  if (!run) throw new Error('the IPC mock is gone');
  run(id, data);
}

export class FakeShell {
  readonly calls: Call[] = [];
  info: AppInfo;
  profiles: Profile[];
  conversations: Conversation[];
  stored = new Map<string, StoredMessage[]>();
  files = new Map<string, FakeFile>();
  drafts = new Map<string, string>();
  settings: AppSettings = {
    maxDownloadMb: 2048,
    maxMediaMb: 64,
    mediaQuotaMb: 2048,
    notifyReply: true,
    notifyCard: true,
    muteUntil: 0,
    locale: 'en',
    closeToTray: true,
    launchAtLogin: false,
    autostartOffered: false,
    trayHintShown: false,
    quickAskShortcut: 'Control+Alt+Space',
    captureShortcut: 'Control+Alt+KeyS',
    captureNamesWindow: false,
  } as AppSettings;
  /** The push-to-talk shortcut the Quick Ask one may not equal (the shell's voice settings). */
  pushToTalk = 'Control+Shift+Space';
  /** What the Quick Ask panel asked of the shell (`quick_hide`, `quick_open_in_main`). */
  quickCalls: { cmd: string; args: Record<string, unknown> }[] = [];
  agent: FakeAgent | null = null;
  /** What the file picker answers. */
  picks: string[] = [];
  /** What the system clipboard holds, as "Ask about the clipboard" reads it: an image (its size), or text (quoted
   *  up to 4,000 characters, a `.txt` file beyond, as the shell's `clipboard_offer`). */
  clipboard: { image: number } | { text: string } | null = null;
  /** Screen capture: what the OS says of the app reading the screen (and answers when asked), and the windows on
   *  screen. A capture is a PNG of `captureBytes` bytes in the temporary folder. */
  captureAccess: 'granted' | 'denied' | 'unknown' = 'granted';
  captureAccessAnswer: 'granted' | 'denied' | 'unknown' = 'granted';
  captureWindows: { id: number; title: string; appName: string; width: number; height: number }[] = [];
  captureBytes = 200_000;
  /** The window that had the focus when the panel was summoned (the shell keeps its id: `capture_named_window`). */
  focusedBefore: number | null = null;
  /** A region capture under way: the rectangle the page drew is in `regionEnds`. */
  regionEnds: ({ x: number; y: number; width: number; height: number } | null)[] = [];
  /** The capture shortcut was pressed: the panel's next `quick_take_capture` answers true, once. */
  capturePending = false;
  private captured(what: string, stamp: string, width: number, height: number) {
    const path = `/tmp/hermes/${what}-${stamp}.png`;
    this.files.set(path, { info: { path, name: path.split('/').pop()!, size: this.captureBytes, mime: 'image/png' } });
    return { path, width, height };
  }
  /** Each connected profile's channel and the index of its next message (the Channel puts them in order). */
  private channels = new Map<string, { id: number; index: number }>();
  private lastProfile: string | null = null;
  private listeners = new Map<string, number[]>();
  private seq = 0;

  constructor(private opts: FakeShellOptions = {}) {
    this.info = {
      version: '0.1.0',
      dataDir: '/data',
      logDir: '/logs',
      keychain: { available: true },
      demo: false,
      ...opts.info,
    };
    // copies: the shell changes its own records, never the caller's
    this.profiles = (opts.profiles ?? []).map((p) => ({ ...p }));
    this.conversations = (opts.conversations ?? []).map((c) => ({ ...c }));
  }

  /** Routes every `invoke` of the page to {@link handle}. */
  install(): this {
    mockIPC((cmd: string, payload?: InvokeArgs) => this.handle(cmd, (payload ?? {}) as Args));
    return this;
  }

  /** Also lets the window's webview be found (`getCurrentWebview()`: file drops). */
  installWindow(): this {
    mockWindows('main');
    return this;
  }

  id(prefix: string): string {
    return `${prefix}-${++this.seq}`;
  }

  /** Sends an event on the channel of `profileId`'s connection (the last one connected when omitted). */
  emit(ev: UiEvent, profileId: string | null = this.lastProfile): void {
    const ch = profileId === null ? undefined : this.channels.get(profileId);
    if (!ch) throw new Error('not connected');
    runCallback(ch.id, { index: ch.index++, message: ev });
  }

  isConnected(profileId?: string): boolean {
    return profileId ? this.channels.has(profileId) : this.channels.size > 0;
  }

  /** Whether an event for `profileId` would reach the page: it is connected and this shell still answers the IPC
   *  (a test's mocks are cleared after it, while a scripted reply may still be on its way). */
  reaches(profileId: string): boolean {
    return this.channels.has(profileId) && typeof internals()?.runCallback === 'function';
  }

  /** Delivers an app event (`tauri://drag-drop`, `deep-link-connect`, …) to the page's listeners. */
  fire(event: string, payload: unknown): void {
    for (const handler of this.listeners.get(event) ?? []) runCallback(handler, { event, id: handler, payload });
  }

  private profile(id: unknown): Profile {
    const p = this.profiles.find((x) => x.id === id);
    if (!p) throw appError('not_found', 'No such profile');
    return p;
  }

  handle(cmd: string, a: Args): unknown {
    this.calls.push({ cmd, args: a });
    const h = this.opts.handlers?.[cmd];
    if (h) return h(a);
    switch (cmd) {
      case 'app_info':
        return { ...this.info };
      case 'list_profiles':
        return this.profiles.map((p) => ({ ...p }));
      case 'create_profile': {
        const input = a.input as ProfileInput;
        const p: Profile = {
          ...input,
          id: this.id('p'),
          deviceId: `desktop-${(++this.seq).toString(16).padStart(12, '0')}`,
          hasToken: false,
          tokenSessionOnly: false,
          paired: false,
        };
        this.profiles.push(p);
        return { ...p };
      }
      case 'update_profile':
        return { ...Object.assign(this.profile(a.id), a.input as ProfileInput) };
      case 'set_paired': {
        const p = this.profile(a.profileId);
        p.paired = a.paired as boolean;
        return { ...p };
      }
      case 'set_home': {
        const p = this.profile(a.profileId);
        const cid = (a.conversationId as string | null) ?? null;
        if (cid && !this.conversations.some((c) => c.id === cid && c.profileId === p.id))
          throw appError('invalid_input', 'not a conversation of this agent');
        p.homeConversationId = cid ?? undefined;
        return { ...p };
      }
      case 'delete_profile':
        this.profiles = this.profiles.filter((p) => p.id !== a.id);
        this.conversations = this.conversations.filter((c) => c.profileId !== a.id);
        return null;
      case 'set_token':
      case 'delete_token': {
        const p = this.profiles.find((x) => x.id === a.profileId);
        if (p) p.hasToken = cmd === 'set_token';
        return null;
      }
      case 'connect': {
        const pid = String(a.profileId);
        this.channels.set(pid, { id: (a.onEvent as { id: number }).id, index: 0 });
        this.lastProfile = pid;
        this.agent?.connected(pid);
        return null;
      }
      case 'disconnect':
        this.channels.delete(String(a.profileId));
        return null;
      case 'send_command': {
        const c = a.command as EngineCommand;
        const answer = this.agent?.command(String(a.profileId), c);
        if (answer) return answer;
        return 'id' in c && c.id ? { id: c.id } : { id: this.id('srv') };
      }
      case 'list_conversations':
        return this.conversations
          .filter((c) => c.profileId === a.profileId)
          .map((c) => ({ ...c, draft: this.drafts.get(c.id) ?? c.draft ?? null }));
      case 'create_conversation': {
        const c: Conversation = {
          id: this.id('c'),
          profileId: String(a.profileId),
          title: String(a.title),
          session: crypto.randomUUID(),
          updatedAt: Date.now(),
          unread: 0,
        };
        this.conversations.unshift(c);
        return { ...c };
      }
      case 'rename_conversation': {
        const c = this.conversations.find((x) => x.id === a.id);
        if (c) c.title = String(a.title);
        return null;
      }
      case 'delete_conversation':
        this.conversations = this.conversations.filter((c) => c.id !== a.id);
        this.drafts.delete(String(a.id));
        return null;
      case 'get_draft':
        return this.drafts.get(String(a.conversationId)) ?? null;
      case 'set_draft': {
        const text = String(a.text);
        if (text.trim()) this.drafts.set(String(a.conversationId), text);
        else this.drafts.delete(String(a.conversationId));
        return null;
      }
      case 'mark_read': {
        const c = this.conversations.find((x) => x.id === a.conversationId);
        if (c) c.unread = 0;
        return null;
      }
      case 'history':
        return this.opts.history ?? { messages: [...(this.stored.get(String(a.conversationId)) ?? [])].reverse(), cards: [] };
      case 'search':
        return this.search(String(a.query));
      case 'file_url': {
        const path = String(a.token);
        return this.files.get(path)?.url ?? `asset://localhost/${encodeURIComponent(path)}`;
      }
      case 'file_type':
        return fakeFileType(String(a.token));
      case 'file_info': {
        const f = this.files.get(String(a.token));
        if (!f) throw appError('not_found', `File not found: ${String(a.token)}`);
        return { ...f.info };
      }
      case 'downscale_image': {
        const path = String(a.token);
        const f = this.files.get(path);
        const small = path.replace(/(\.\w+)$/, '-small$1');
        const name = (f?.info.name ?? 'image.jpg').replace(/(\.\w+)$/, '-small$1');
        this.files.set(small, { info: { path: small, name, size: Math.round(Number(a.maxBytes) * 0.6), mime: f?.info.mime } });
        return small;
      }
      case 'write_temp_file': {
        const filename = String(a.filename);
        const base64 = String(a.base64);
        const path = `/tmp/hermes/${this.id('paste')}-${filename}`;
        const size = Math.floor((base64.length * 3) / 4);
        this.files.set(path, { info: { path, name: filename, size, mime: 'image/png' }, url: `data:image/png;base64,${base64}` });
        return path;
      }
      case 'pick_files':
        return [...this.picks];
      case 'clipboard_offer': {
        const c = this.clipboard;
        if (!c) return { kind: 'empty' };
        if ('text' in c && [...c.text].length <= 4000) return { kind: 'text', text: c.text };
        const ext = 'text' in c ? 'txt' : 'png';
        const path = `/tmp/hermes/clipboard-${String(a.stamp)}.${ext}`;
        const size = 'text' in c ? new TextEncoder().encode(c.text).length : c.image;
        this.files.set(path, { info: { path, name: path.split('/').pop()!, size, mime: ext === 'png' ? 'image/png' : 'text/plain' } });
        return { kind: 'file', path };
      }
      case 'quick_take_capture': {
        const was = this.capturePending;
        this.capturePending = false;
        return was;
      }
      case 'capture_access':
        return this.captureAccess;
      case 'capture_access_request':
        this.captureAccess = this.captureAccessAnswer;
        return this.captureAccess;
      case 'capture_windows':
        return this.captureWindows.map((w) => ({ ...w }));
      case 'capture_named_window': {
        if (!this.settings.captureNamesWindow) return null;
        const id = (a.picked as number | null) ?? this.focusedBefore;
        const w = this.captureWindows.find((x) => x.id === id);
        return w ? { title: w.title, appName: w.appName } : null;
      }
      case 'capture_screen':
      case 'capture_window':
      case 'capture_region_begin':
        return this.captured(cmd === 'capture_window' ? 'window' : 'screen', String(a.stamp), 1920, 1080);
      case 'capture_region_show':
        return null;
      case 'capture_region_end': {
        const r = a.rect as { x: number; y: number; width: number; height: number } | null;
        this.regionEnds.push(r);
        return r ? this.captured('region', String(a.stamp), r.width, r.height) : null;
      }
      case 'crop_image': {
        const r = a.rect as { width: number; height: number };
        const from = this.files.get(String(a.token))?.info.name ?? 'picture.png';
        return this.captured(`${from.replace(/\.\w+$/, '')}-cut`, String(a.stamp), r.width, r.height);
      }
      case 'app_settings':
        return { ...this.settings };
      case 'app_save_settings': {
        const s = a.settings as AppSettings;
        // the shell's checks (shortcuts.rs): the same keys in any spelling and order
        const keys = (v: string) => v.toLowerCase().replace(/ctrl/g, 'control').replace(/commandorcontrol/g, 'control').split('+').map((k) => k.trim()).sort().join('+');
        const all = [this.pushToTalk, s.quickAskShortcut, s.captureShortcut].filter((k): k is string => !!k).map(keys);
        if (new Set(all).size < all.length) throw appError('shortcut_conflict', 'two shortcuts are the same keys');
        const clamp = (n: number, max: number) => Math.min(Math.max(Math.round(n), 1), max);
        this.settings = {
          ...s,
          maxDownloadMb: clamp(s.maxDownloadMb, 1024 * 1024),
          maxMediaMb: clamp(s.maxMediaMb, 16 * 1024),
          mediaQuotaMb: clamp(s.mediaQuotaMb, 1024 * 1024),
        };
        return { ...this.settings };
      }
      case 'agent_statuses':
        return this.profiles.map((p) => ({
          profileId: p.id,
          name: p.name,
          state: this.channels.has(p.id) ? 'connected' : 'offline',
          sinceMs: 0,
        }));
      case 'quick_page_ready':
        return null;
      case 'main_page_ready':
        this.quickCalls.push({ cmd, args: a });
        return null;
      case 'quick_hide':
      case 'quick_open_in_main':
        this.quickCalls.push({ cmd, args: a });
        return null;
      case 'check_for_updates':
      case 'install_update':
        return { status: 'not_configured', current: this.info.version };
      case 'plugin:event|listen': {
        const ev = String(a.event);
        this.listeners.set(ev, [...(this.listeners.get(ev) ?? []), a.handler as number]);
        return a.handler;
      }
      case 'plugin:event|unlisten': {
        const ids = this.listeners.get(String(a.event));
        if (ids) this.listeners.set(String(a.event), ids.filter((id) => id !== a.eventId));
        return null;
      }
      default:
        // clipboard_image (a browser's paste event carries the image itself), open_*, notify, export…: nothing to do
        return null;
    }
  }

  private search(query: string): SearchHit[] {
    const q = query.toLowerCase();
    const hits: SearchHit[] = [];
    for (const [conversationId, msgs] of this.stored) {
      const profileId = this.conversations.find((c) => c.id === conversationId)?.profileId ?? '';
      for (const m of msgs) {
        const i = m.text.toLowerCase().indexOf(q);
        if (i < 0) continue;
        const start = Math.max(0, i - 30);
        const snippet = `${start > 0 ? '…' : ''}${m.text.slice(start, i)}[${m.text.slice(i, i + q.length)}]${m.text.slice(i + q.length, i + q.length + 60)}…`;
        hits.push({ messageId: m.id, conversationId, profileId, snippet, createdAt: m.createdAt });
      }
    }
    return hits;
  }
}
