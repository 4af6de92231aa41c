import { getContext, setContext } from 'svelte';
import type { Backend } from '../backend/backend';
import { errorMessage } from '../backend/backend';
import type { AppInfo, Profile, ProfileInput } from '../backend/types';
import { setLocale, type Locale } from '../i18n/index.svelte';
import { ProfileSession } from './chat.svelte';
import { markOnce } from '../util/frame';

export type Theme = 'system' | 'light' | 'dark';

export interface Prefs {
  theme: Theme;
  locale: Locale;
  notifyReply: boolean;
  notifyCard: boolean;
  avatarPaneOpen: boolean;
}

const PREFS_KEY = 'hermes.prefs.v1';

export const DEFAULT_PREFS: Prefs = {
  theme: 'system',
  locale: 'en',
  notifyReply: true,
  notifyCard: true,
  avatarPaneOpen: true,
};

export function loadPrefs(): Prefs {
  try {
    const raw = localStorage.getItem(PREFS_KEY);
    if (raw) return { ...DEFAULT_PREFS, ...(JSON.parse(raw) as Partial<Prefs>) };
  } catch {
    /* ignore broken prefs */
  }
  const nav = typeof navigator !== 'undefined' ? navigator.language : 'en';
  const locale: Locale = nav.startsWith('zh') ? 'zh' : nav.startsWith('ru') ? 'ru' : 'en';
  return { ...DEFAULT_PREFS, locale };
}

export interface Selection {
  profileId: string;
  conversationId: string;
}

/** Which window this page is: the main window, or the Quick Ask panel (`window.__HERMES_VIEW__`, set by the shell). */
export type View = 'main' | 'quick';

/** What the Quick Ask panel remembers: the agent it talks to, and whether it starts a fresh conversation each time. */
export interface QuickPrefs {
  profileId: string | null;
  fresh: boolean;
}

const QUICK_KEY = 'hermes.quick.v1';

export function loadQuickPrefs(): QuickPrefs {
  try {
    const raw = localStorage.getItem(QUICK_KEY);
    if (raw) {
      const q = JSON.parse(raw) as Partial<QuickPrefs>;
      return { profileId: typeof q.profileId === 'string' ? q.profileId : null, fresh: q.fresh === true };
    }
  } catch {
    /* broken: the defaults */
  }
  return { profileId: null, fresh: false };
}

export type SettingsTab = 'general' | 'profiles' | 'appearance' | 'notifications' | 'voice' | 'storage' | 'shortcuts' | 'about';

/** Everything the shell of the UI shares: profiles, their sessions, selection, prefs, dialogs. */
export class AppState {
  info = $state<AppInfo | null>(null);
  profiles = $state<Profile[]>([]);
  sessions = $state<Record<string, ProfileSession>>({});
  selection = $state<Selection | null>(null);
  prefs = $state<Prefs>(loadPrefs());
  settingsOpen = $state(false);
  settingsTab = $state<SettingsTab>('profiles');
  settingsProfileId = $state<string | null>(null);
  /** From a `hermes://connect` link: what the new-profile form starts with. */
  prefill = $state<{ url: string; name?: string | null } | null>(null);
  /** A message to scroll to and flash (search results). */
  jumpTo = $state<{ conversationId: string; messageId: string; nonce: number } | null>(null);
  startupError = $state<string | null>(null);
  focused = $state(true);
  /** Files dropped on the window (the shell's tokens for them), consumed by the composer. */
  pendingDrop = $state<string[]>([]);
  /** Text to quote at the top of the composer ("Ask about the clipboard"), consumed by the composer. */
  pendingQuote = $state<string | null>(null);
  /** A line about what was attached (the window a capture came from), put first in the composer once. */
  pendingLine = $state<string | null>(null);
  focusComposerNonce = $state(0);
  focusSearchNonce = $state(0);
  sidebarOpen = $state(true);
  /** The one-time offer to start at login, after the user added their first agent. */
  autostartOffer = $state(false);
  /** Set by the voice module: final replies and agent voice notes of every profile (read-aloud, avatar). */
  agentHooks: {
    onReplyFinal?: (profileId: string, text: string) => void;
    onVoiceNote?: (profileId: string, path: string) => void;
    onCard?: (profileId: string, text: string) => void;
  } = {};

  /** The Quick Ask panel's choices (its page only). */
  quick = $state<QuickPrefs>(loadQuickPrefs());

  constructor(
    public backend: Backend,
    public view: View = 'main',
  ) {
    setLocale(this.prefs.locale);
  }

  savePrefs(patch: Partial<Prefs>): void {
    this.prefs = { ...this.prefs, ...patch };
    if (patch.locale) setLocale(patch.locale);
    if (patch.locale !== undefined || patch.notifyReply !== undefined || patch.notifyCard !== undefined) {
      void this.saveShellPrefs();
    }
    try {
      localStorage.setItem(PREFS_KEY, JSON.stringify(this.prefs));
    } catch {
      /* private mode */
    }
  }

  /** The shell raises notifications (they must fire with no page): it keeps their switches and the UI's language. */
  private async saveShellPrefs(): Promise<void> {
    try {
      const cur = await this.backend.appSettings();
      const { notifyReply, notifyCard, locale } = this.prefs;
      if (cur.notifyReply === notifyReply && cur.notifyCard === notifyCard && cur.locale === locale) return;
      await this.backend.appSaveSettings({ ...cur, notifyReply, notifyCard, locale });
    } catch {
      /* the switches stay as the shell has them */
    }
  }

  /** The notification switches as the shell keeps them; the UI's language to the shell. */
  private async syncShellPrefs(): Promise<void> {
    try {
      const cur = await this.backend.appSettings();
      if (cur.locale === undefined) return; // a shell that keeps no such settings
      this.prefs = { ...this.prefs, notifyReply: cur.notifyReply, notifyCard: cur.notifyCard };
      if (cur.locale !== this.prefs.locale) await this.backend.appSaveSettings({ ...cur, locale: this.prefs.locale });
    } catch {
      /* not in the shell (tests) */
    }
  }

  get currentSession(): ProfileSession | null {
    return this.selection ? (this.sessions[this.selection.profileId] ?? null) : null;
  }

  /** The page has something to show: the selected conversation, or why there is none (no agent yet, a start-up
   *  error). A window built a moment ago goes on screen then (App.svelte, QuickApp.svelte). */
  get renderable(): boolean {
    return !!this.startupError || (this.profiles.length === 0 && this.info !== null) || (!!this.currentSession && !!this.selection);
  }

  get currentProfile(): Profile | null {
    return this.selection ? (this.profiles.find((p) => p.id === this.selection!.profileId) ?? null) : null;
  }

  async start(): Promise<void> {
    try {
      markOnce('hermes:start');
      // The app's info does not hold up the first conversation (launch → interactive): it is applied when it comes.
      const info = this.backend.appInfo().then((i) => (this.info = i));
      info.catch(() => {}); // (awaited below; this only keeps an early failure from counting as unhandled)
      void this.syncShellPrefs();
      this.watchVisibility();
      await this.refreshProfiles();
      markOnce('hermes:profiles');
      // A page built to show a conversation (a notification or the tray was clicked while the window was gone)
      // opens that one first.
      const open = (await info.catch(() => null))?.openConversation;
      const first = this.profiles[0];
      if (this.view === 'quick') {
        // the panel talks to one agent: the one it talked to last
        const last = this.profiles.find((p) => p.id === this.quick.profileId) ?? first;
        if (last) await this.openProfile(last.id);
        return;
      }
      if (open && this.sessions[open.profileId]) await this.openConversation(open.profileId, open.conversationId);
      else if (first) await this.openProfile(first.id);
      // The shell keeps every agent with a token connected: the page follows them all (their state, what arrives).
      for (const p of this.profiles) {
        const s = this.sessions[p.id];
        if (p.hasToken && s?.status.kind === 'idle') void s.connect();
      }
      // A hermes://connect link that launched the app came before the page could listen for it.
      const link = (await info).pendingLink;
      if (link) this.openNewProfile(link.url, link.name);
    } catch (e) {
      this.startupError = errorMessage(e);
    }
  }

  /** Shown again after being hidden: the open conversation has been seen now. */
  private watchVisibility(): void {
    if (typeof document === 'undefined') return;
    document.addEventListener('visibilitychange', () => {
      const sel = this.selection;
      if (!pageHidden() && sel) this.sessions[sel.profileId]?.markRead(sel.conversationId);
    });
  }

  async refreshProfiles(): Promise<void> {
    const list = await this.backend.listProfiles();
    this.profiles = list;
    for (const p of list) {
      const s = this.sessions[p.id];
      if (s) s.profile = p;
      else this.sessions[p.id] = this.makeSession(p);
    }
    // every profile's conversations at once, not one round trip after another
    await Promise.all(list.map((p) => this.sessions[p.id].loadConversations().catch(() => {})));
    for (const id of Object.keys(this.sessions)) {
      if (!list.some((p) => p.id === id)) delete this.sessions[id];
    }
    if (this.selection && !list.some((p) => p.id === this.selection!.profileId)) this.selection = null;
  }

  private makeSession(p: Profile): ProfileSession {
    return new ProfileSession(this.backend, p, {
      onReplyFinal: (text) => this.agentHooks.onReplyFinal?.(p.id, text),
      onVoiceNote: (path) => this.agentHooks.onVoiceNote?.(p.id, path),
      onCard: (text) => this.agentHooks.onCard?.(p.id, text),
      // A conversation on screen is read as things come; behind a hidden window it is not (the shell counts it in
      // the tray and notifies: notify.rs, whether or not this page exists).
      isOpen: (conversationId) => this.selection?.conversationId === conversationId && !pageHidden(),
    });
  }

  /** Selects a profile's first conversation, connecting its engine if needed. */
  async openProfile(profileId: string): Promise<void> {
    const s = this.sessions[profileId];
    if (!s) return;
    if (!s.conversationsLoaded) await s.loadConversations().catch(() => {});
    const conv = s.conversations[0];
    // Connect while the history loads (launch → interactive): live events that arrive first stay after the stored
    // messages (loadHistory merges them).
    const connecting = s.status.kind === 'idle' ? s.connect() : Promise.resolve();
    if (conv) await this.select(profileId, conv.id);
    await connecting;
    if (!conv) {
      // A new v3 agent has no conversation until connecting created its first one: show it (not "Loading…").
      await s.loadConversations().catch(() => {});
      const first = s.conversations[0];
      if (first) await this.select(profileId, first.id);
    }
  }

  async select(profileId: string, conversationId: string): Promise<void> {
    const s = this.sessions[profileId];
    if (!s) return;
    this.selection = { profileId, conversationId };
    s.activeConversationId = conversationId;
    for (const other of Object.values(this.sessions)) if (other !== s) other.leave();
    s.markRead(conversationId);
    if (s.status.kind === 'idle') void s.connect();
    await s.loadHistory(conversationId);
  }

  /** The conversation above (-1) or below (+1) the open one, in the sidebar's order (agents, then their
   *  conversations); stays put at either end. */
  async selectAdjacent(delta: -1 | 1): Promise<void> {
    const all = this.profiles.flatMap((p) => (this.sessions[p.id]?.conversations ?? []).map((c) => [p.id, c.id] as const));
    if (all.length === 0) return;
    const at = all.findIndex(([, c]) => c === this.selection?.conversationId);
    const next = all[at < 0 ? 0 : Math.min(all.length - 1, Math.max(0, at + delta))];
    if (next[1] !== this.selection?.conversationId) await this.select(next[0], next[1]);
  }

  async createProfile(input: ProfileInput): Promise<Profile> {
    const p = await this.backend.createProfile(input);
    await this.refreshProfiles();
    void this.offerAutostartOnce();
    return p;
  }

  /** After the user's first agent: ask once whether the app should start at login (scheduled messages arrive
   *  only while it runs). Remembered by the shell whatever the answer. */
  private async offerAutostartOnce(): Promise<void> {
    try {
      const s = await this.backend.appSettings();
      if (s.autostartOffered || s.launchAtLogin) return;
      await this.backend.appSaveSettings({ ...s, autostartOffered: true });
      this.autostartOffer = true;
    } catch {
      /* no offer: the setting stays in Settings → General */
    }
  }

  /** Opens `conversationId` of `profileId` (the shell asked: a notification or the tray was clicked). */
  async openConversation(profileId: string, conversationId: string): Promise<void> {
    const s = this.sessions[profileId];
    if (!s) return;
    this.settingsOpen = false;
    if (!s.conversations.some((c) => c.id === conversationId)) await s.loadConversations().catch(() => {});
    await this.select(profileId, conversationId);
  }

  async updateProfile(id: string, input: ProfileInput): Promise<Profile> {
    const p = await this.backend.updateProfile(id, input);
    await this.refreshProfiles();
    return p;
  }

  async deleteProfile(id: string): Promise<void> {
    await this.sessions[id]?.disconnect().catch(() => {});
    await this.backend.deleteProfile(id);
    await this.refreshProfiles();
    if (!this.selection && this.profiles[0]) await this.openProfile(this.profiles[0].id);
  }

  /** After token or URL changes: a fresh connection (A-4: access denied waits for this). */
  async reconnectProfile(id: string): Promise<void> {
    const s = this.sessions[id];
    if (!s) return;
    if (s.status.kind !== 'idle') await s.disconnect().catch(() => {});
    await s.connect();
  }

  /** The Quick Ask panel's choices, remembered. */
  saveQuickPrefs(patch: Partial<QuickPrefs>): void {
    this.quick = { ...this.quick, ...patch };
    try {
      localStorage.setItem(QUICK_KEY, JSON.stringify(this.quick));
    } catch {
      /* storage full or off: the choice lasts this run */
    }
  }

  openNewProfile(url: string, name?: string | null): void {
    this.prefill = { url, name };
    this.openSettings('profiles', 'new');
  }

  openSettings(tab: SettingsTab = 'profiles', profileId: string | null = null): void {
    this.settingsTab = tab;
    this.settingsProfileId = profileId ?? this.selection?.profileId ?? null;
    this.settingsOpen = true;
  }

  async newConversation(title: string): Promise<void> {
    const s = this.currentSession;
    if (!s || s.profile.dialect !== 'v3') return;
    const c = await s.createConversation(title);
    await this.select(s.profile.id, c.id);
  }

  async jump(profileId: string, conversationId: string, messageId: string): Promise<void> {
    await this.select(profileId, conversationId);
    const s = this.sessions[profileId];
    const tl = s.timeline(conversationId);
    // Page back until the message is loaded (bounded).
    for (let i = 0; i < 20 && !tl.find(messageId) && tl.hasMore; i++) {
      if ((await s.loadOlder(conversationId)) === 0) break;
    }
    this.jumpTo = { conversationId, messageId, nonce: Date.now() };
  }
}

/** The page is behind a hidden (or minimized) window. */
function pageHidden(): boolean {
  return typeof document !== 'undefined' && document.visibilityState === 'hidden';
}

const KEY = Symbol('app');
export function setApp(a: AppState): AppState {
  setContext(KEY, a);
  return a;
}
export function getApp(): AppState {
  const a = getContext<AppState | undefined>(KEY);
  if (!a) throw new Error('AppState missing from context');
  return a;
}
