import { SvelteMap } from 'svelte/reactivity';
import type { Backend } from '../backend/backend';
import { errorMessage, toBackendError } from '../backend/backend';
import { eventErrorText } from '../errors';
import type {
  Attachment,
  Command,
  Conversation,
  EngineEvent,
  EventOf,
  Features,
  FileInfo,
  HistoryPage,
  MessageError,
  MessageState,
  Profile,
  PromptOption,
  StoredCard,
  StoredMessage,
} from '../backend/types';
import type { VoiceClip, VoiceSendTo } from '../backend/voice';
import { markOnce, newId, nextFrame } from '../util/frame';
import { parseTime } from '../util/format';
import { guessMime, kindFromMime, maxMediaBytes } from '../util/media';
import { denialCause, isPairingReply } from './agent-text';

/** Error codes that announce an access denial (A-4, G-3): the access-denied banner already says it. */
const AUTH_CODES = new Set(['auth_failed', 'unauthorized', 'forbidden']);
/** `error{id}` codes the engine recovers from by itself (a v3 upload it tries again): the message stays queued. */
const TRANSIENT_CODES = new Set(['upload_failed']);
/** A refusal of the id a Retry reused: the agent had that message already, so it goes again as a new one. */
const ID_IN_USE = 'id_in_use';

/** Before the agent's first `ready` (a fresh start, a restart): files and voice on until it says otherwise. What
 *  it accepts afterwards is the engine's `ready.features`, never derived here from `capabilities`. */
export const DEFAULT_FEATURES: Readonly<Features> = { files: true, voice: true };

/* ---------- Timeline items ---------- */

export interface MessageItem {
  type: 'message';
  id: string;
  serverId?: string | null;
  direction: 'in' | 'out';
  text: string;
  final: boolean;
  state: MessageState;
  replyTo?: string | null;
  error?: MessageError | null;
  createdAt: number;
  attachments: Attachment[];
  /** The failed message this one sends again (the agent had received and refused that one). */
  retryOf?: string | null;
}

export interface CardItem {
  type: 'card';
  id: string;
  kind: string;
  text: string;
  options: PromptOption[];
  command?: string | null;
  description?: string | null;
  timeoutSeconds?: number | null;
  createdAt: number;
  /** Set by prompt_done or when the countdown runs out locally. */
  done?: { optionId?: string | null; expired: boolean };
  /** The option (or "other") whose answer is on its way. */
  answering?: string | null;
  answerError?: string;
}

/** A download in progress that has no message yet (its `media` event comes when complete). */
export interface DownloadItem {
  type: 'download';
  id: string;
  createdAt: number;
}

export type TimelineItem = MessageItem | CardItem | DownloadItem;

export const HISTORY_PAGE = 50;
/** The store's `last_preview` of a newest message that is a file without text (see crates/store's schema). */
export const ATTACHMENT_PREVIEW = '[attachment]';
export const PAIRING_WAIT_MS = 15_000;
/** A push-to-talk recording holds up to four messages' worth and is split into ≤ 8 MiB WAVs (A-24): with each
 *  part's header, at most five. */
const MAX_VOICE_PARTS = 5;

export function fromStored(m: StoredMessage): MessageItem {
  return {
    type: 'message',
    id: m.id,
    serverId: m.serverId,
    direction: m.direction,
    text: m.text,
    final: m.final,
    state: m.state,
    replyTo: m.replyTo,
    error: m.error,
    createdAt: parseTime(m.createdAt),
    attachments: m.attachments ?? [],
    retryOf: m.retryOf ?? null,
  };
}

/** When a card's time runs out (epoch ms), or `null` for a card without a timeout. */
export function cardDeadline(c: CardItem): number | null {
  return c.timeoutSeconds ? c.createdAt + c.timeoutSeconds * 1000 : null;
}

/** Whether a card still waits for an answer at `now`: no outcome, and its time (if it has one) not run out. */
export function cardWaiting(c: CardItem, now: number): boolean {
  const deadline = cardDeadline(c);
  return !c.done && !(deadline !== null && deadline <= now);
}

/** A card from the history (its outcome included; one still waiting can be answered). */
export function fromStoredCard(c: StoredCard): CardItem {
  return {
    type: 'card',
    id: c.id,
    kind: c.kind,
    text: c.text,
    options: c.options,
    command: c.command,
    description: c.description,
    timeoutSeconds: c.timeoutSeconds,
    createdAt: parseTime(c.createdAt),
    done: c.done ? { optionId: c.done.optionId, expired: c.done.expired } : undefined,
    answering: null,
  };
}

/** A history page's messages and cards, oldest first. The page's messages come newest first: reversed before the
 *  (stable) sort, so messages stored in the same millisecond keep the order they were written in. */
function storedItems(page: HistoryPage): (MessageItem | CardItem)[] {
  const items: (MessageItem | CardItem)[] = [
    ...[...page.messages].reverse().map(fromStored),
    ...(page.cards ?? []).map(fromStoredCard),
  ];
  return items.sort((a, b) => a.createdAt - b.createdAt);
}

/** The messages of one conversation, as shown. */
export class Timeline {
  items = $state<TimelineItem[]>([]);
  hasMore = $state(false);
  loaded = $state(false);
  loadingOlder = $state(false);
  loadError = $state<string | null>(null);
  /** The first item that arrived while the conversation was not on screen, when it was opened: the list shows a
   *  "New messages" line above it until another conversation is opened. */
  newFrom = $state<string | null>(null);
  /** Unread messages counted before this launch (the store's count), when it was opened before its history was in:
   *  the line goes above the `newCount`-th newest of the agent's messages once it is (`placeNewLine`). */
  newCount = 0;
  conversation: Conversation;

  /** Puts the "New messages" line above the `newCount`-th newest of the agent's messages (the oldest loaded one when
   *  fewer are loaded). */
  placeNewLine(): void {
    if (this.newCount <= 0) return;
    const incoming = this.items.filter((i) => i.type === 'message' && i.direction === 'in');
    const first = incoming[Math.max(0, incoming.length - this.newCount)];
    if (first) this.newFrom = first.id;
    this.newCount = 0;
  }

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  get isLocal(): boolean {
    return this.conversation.id.startsWith('local:');
  }

  find(id: string): TimelineItem | undefined {
    return this.items.find((i) => i.id === id || (i.type === 'message' && i.serverId === id));
  }

  /** Appends and returns the reactive proxy of the item. */
  push<T extends TimelineItem>(item: T): T {
    this.items.push(item);
    return this.items[this.items.length - 1] as T;
  }

  remove(id: string): void {
    const i = this.items.findIndex((x) => x.id === id);
    if (i >= 0) this.items.splice(i, 1);
  }
}

export type ConnStatus =
  | { kind: 'idle' }
  | { kind: 'connecting'; attempt: number }
  | { kind: 'ready' }
  /** `code`: why (`disconnected{code}`, translated by the banner); `text`: a sentence already made for the user
   *  (the engine could not start); `reason`: the engine's English detail, never shown as such. */
  | { kind: 'disconnected'; reason: string; retryAt?: number; code?: string | null; text?: string }
  | { kind: 'access_denied'; reason: string };

export interface Notice {
  id: string;
  code: string;
  text: string;
}

export interface ProgressInfo {
  direction: 'up' | 'down';
  done: number;
  total: number;
}

export interface SessionHooks {
  /** A reply became final / a card arrived: the app may notify when unfocused. */
  onIncoming?: (kind: 'reply' | 'card', text: string) => void;
  /** A reply's text became final (read-aloud, the avatar's speech bubble). */
  onReplyFinal?: (text: string) => void;
  /** The agent sent a voice note (media kind `voice`): play it with the avatar speaking. */
  onVoiceNote?: (path: string) => void;
  /** An approval or question card arrived (the avatar's speech bubble asks it). */
  onCard?: (text: string) => void;
  /** Whether the conversation is the one on screen (what arrives there is not counted as unread). */
  isOpen?: (conversationId: string) => boolean;
}

/** One profile's live connection and its conversations. */
export class ProfileSession {
  status = $state<ConnStatus>({ kind: 'idle' });
  capabilities = $state<Record<string, unknown>>({});
  /** Files and voice on or off for this agent (`ready.features`); on until its first `ready` says otherwise. */
  features = $state<Features>({ ...DEFAULT_FEATURES });
  /** Whether {@link features} came from the engine (else the per-file limit is the adapter's default). */
  private featuresKnown = false;
  sessionName = $state('');
  avatarUrl = $state<string | undefined>(undefined);
  typing = $state(false);
  avatarState = $state('idle');
  progress = $state<Record<string, ProgressInfo>>({});
  notices = $state<Notice[]>([]);
  pairingNeeded = $state(false);
  /** The agent evidently approved this device (A-8; kept in the profile): no pairing help. */
  paired = $state(false);
  /** The conversation made the agent's home channel (`/sethome`; kept in the profile). */
  homeConversationId = $state<string | null>(null);
  /** Text for the polite live region: set once per final reply, never per edit. */
  announcement = $state('');
  conversations = $state<Conversation[]>([]);
  conversationsLoaded = $state(false);
  /** Replies, files and cards that arrived in each conversation while another one was on screen (this run). */
  unread = $state<Record<string, number>>({});
  private _profile!: Profile;
  /** The profile as the shell last returned it; its pairing and home channel are followed in {@link paired} and
   *  {@link homeConversationId}. */
  get profile(): Profile {
    return this._profile;
  }
  set profile(p: Profile) {
    this._profile = p;
    this.paired = !!p.paired;
    this.homeConversationId = p.homeConversationId ?? null;
  }

  private timelines = new SvelteMap<string, Timeline>();
  private pending = new Map<string, EventOf<'message'>>();
  /** Ids the shell is sending push-to-talk clips under (`voice_stop`, {@link voiceRoute}) → the events about them that
   *  arrived before the clip's echo exists (the engine's `sent` can overtake `voice_stop`'s reply). */
  private voiceIds = new Map<string, EngineEvent[]>();
  private frameScheduled = false;
  /** Approval evidence: 0 no reply yet; 1 a reply came; 2 the user wrote after a reply (the next reply that is
   *  not about pairing shows the device approved). */
  private pairStage: 0 | 1 | 2 = 0;
  private pairingTimer: ReturnType<typeof setTimeout> | null = null;
  /** Conversation to route session-less events to (the last one the user wrote in). */
  activeConversationId: string | null = null;

  constructor(
    private backend: Backend,
    profile: Profile,
    private hooks: SessionHooks = {},
  ) {
    this.profile = profile;
  }

  get maxMediaBytes(): number {
    if (this.featuresKnown) return this.features.max_file_bytes ?? Number.POSITIVE_INFINITY;
    return maxMediaBytes(this.capabilities);
  }

  get queuedCount(): number {
    let n = 0;
    for (const tl of this.timelines.values())
      for (const i of tl.items) if (i.type === 'message' && i.direction === 'out' && i.state === 'queued') n++;
    return n;
  }

  /* ---------- conversations ---------- */

  async loadConversations(): Promise<void> {
    let list = await this.backend.listConversations(this.profile.id);
    if (list.length === 0 && this.profile.dialect === 'adapter') {
      // The adapter dialect has exactly one conversation; show it even before anything was stored.
      list = [
        {
          id: `local:${this.profile.id}`,
          profileId: this.profile.id,
          title: this.profile.name,
          session: '',
          updatedAt: new Date().toISOString(),
          unread: 0,
        },
      ];
    }
    this.conversations = list;
    this.conversationsLoaded = true;
    // what the store counted unread before this launch (the open conversation's is cleared when it is selected)
    for (const c of list) {
      if (c.unread > 0 && !(c.id in this.unread)) {
        this.unread[c.id] = c.unread;
        this.storedUnread[c.id] = true;
      }
    }
    for (const c of list) {
      const tl = this.timelines.get(c.id);
      if (tl) tl.conversation = c;
    }
    if (!this.activeConversationId && list.length) this.activeConversationId = list[0].id;
  }

  async createConversation(title: string): Promise<Conversation> {
    const c = await this.backend.createConversation(this.profile.id, title);
    this.conversations = [c, ...this.conversations];
    return c;
  }

  async renameConversation(id: string, title: string): Promise<void> {
    await this.backend.renameConversation(id, title);
    this.conversations = this.conversations.map((c) => (c.id === id ? { ...c, title } : c));
  }

  /** The composer's unsent text in a conversation, from the store (`null`: none). */
  getDraft(conversationId: string): Promise<string | null> {
    return this.backend.getDraft(conversationId);
  }

  /** Keeps the composer's text as the conversation's draft (empty: none); its sidebar row shows it at once. */
  saveDraft(conversationId: string, text: string): Promise<void> {
    const conv = this.conversations.find((c) => c.id === conversationId);
    if (conv) conv.draft = text.trim() ? text : null;
    return this.backend.setDraft(conversationId, text);
  }

  async deleteConversation(id: string): Promise<void> {
    await this.backend.deleteConversation(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    this.timelines.delete(id);
    if (this.activeConversationId === id) this.activeConversationId = this.conversations[0]?.id ?? null;
  }

  timeline(conversationId: string): Timeline {
    let tl = this.timelines.get(conversationId);
    if (!tl) {
      const conv = this.conversations.find((c) => c.id === conversationId) ?? {
        id: conversationId,
        profileId: this.profile.id,
        title: '',
        session: '',
        updatedAt: new Date().toISOString(),
        unread: 0,
      };
      tl = new Timeline(conv);
      this.timelines.set(conversationId, tl);
    }
    return tl;
  }

  async loadHistory(conversationId: string): Promise<void> {
    const tl = this.timeline(conversationId);
    if (tl.loaded || tl.isLocal) {
      tl.loaded = true;
      return;
    }
    try {
      const page = await this.backend.history(conversationId, null, HISTORY_PAGE);
      markOnce('hermes:history-loaded');
      const stored = storedItems(page);
      const known = new Set(tl.items.map((i) => i.id));
      // Live items that arrived while loading stay after the stored ones.
      tl.items = [...stored.filter((m) => !known.has(m.id)), ...tl.items];
      tl.hasMore = page.hasMore;
      // A card from before this start that still waits for an answer is asked in the avatar's bubble, as when it came.
      const newest = tl.items[tl.items.length - 1];
      if (newest?.type === 'card' && stored.some((i) => i.id === newest.id) && cardWaiting(newest, Date.now()))
        this.hooks.onCard?.(newest.text);
      this.noteHistory(stored);
      tl.loadError = null;
    } catch (e) {
      tl.loadError = errorMessage(e);
    } finally {
      tl.loaded = true;
      tl.placeNewLine();
    }
  }

  async loadOlder(conversationId: string): Promise<number> {
    const tl = this.timeline(conversationId);
    if (!tl.hasMore || tl.loadingOlder || tl.isLocal) return 0;
    const first = tl.items.find((i) => i.type === 'message');
    tl.loadingOlder = true;
    try {
      const page = await this.backend.history(conversationId, first?.id ?? null, HISTORY_PAGE);
      const known = new Set(tl.items.map((i) => i.id));
      const older = storedItems(page).filter((m) => !known.has(m.id));
      tl.items.unshift(...older);
      tl.hasMore = page.hasMore;
      return older.length;
    } catch (e) {
      tl.loadError = errorMessage(e);
      return 0;
    } finally {
      tl.loadingOlder = false;
    }
  }

  /* ---------- connection ---------- */

  async connect(): Promise<void> {
    markOnce('hermes:connect-start');
    this.status = { kind: 'connecting', attempt: 1 };
    try {
      await this.backend.connect(this.profile.id, (ev) => this.handle(ev));
    } catch (e) {
      const err = toBackendError(e);
      this.status = { kind: 'disconnected', reason: err.message, text: errorMessage(err) };
    }
  }

  async disconnect(): Promise<void> {
    this.clearPairingTimer();
    try {
      await this.backend.disconnect(this.profile.id);
    } finally {
      this.status = { kind: 'idle' };
    }
  }

  reconnectNow(): Promise<unknown> {
    return this.command({ cmd: 'reconnect' });
  }

  private command(cmd: Command) {
    return this.backend.sendCommand(this.profile.id, cmd);
  }

  /* ---------- events ---------- */

  /** Everything the engine says. Streamed edits are coalesced to one update per animation frame. */
  handle(ev: EngineEvent): void {
    if (ev.event === 'sent' || ev.event === 'delivered' || ev.event === 'error' || ev.event === 'rejected') {
      const early = ev.id ? this.voiceIds.get(ev.id) : undefined;
      if (early) {
        early.push(ev);
        return;
      }
    }
    switch (ev.event) {
      case 'connecting':
        markOnce('hermes:engine-connecting');
        this.status = { kind: 'connecting', attempt: ev.attempt };
        break;
      case 'ready':
        this.status = { kind: 'ready' };
        this.sessionName = ev.session;
        this.avatarUrl = ev.avatar_url || undefined;
        this.capabilities = ev.capabilities ?? {};
        this.featuresKnown = !!ev.features;
        this.features = ev.features ?? { ...DEFAULT_FEATURES };
        markOnce('hermes:connected');
        break;
      case 'message':
        this.onMessage(ev);
        break;
      case 'typing':
        this.typing = ev.on;
        if (ev.on) this.markReply();
        // `typing{stop}` ends the reply: the avatar stops thinking too, without waiting for `avatar{idle}`
        else if (this.avatarState === 'thinking') this.avatarState = 'idle';
        break;
      case 'avatar':
        this.avatarState = ev.state;
        break;
      case 'prompt':
        this.onPrompt(ev);
        break;
      case 'prompt_done': {
        const found = this.findItem(ev.prompt_id);
        if (found?.type === 'card') {
          found.done = { optionId: ev.option_id, expired: ev.expired };
          found.answering = null;
        }
        break;
      }
      case 'media':
        this.onMedia(ev);
        break;
      case 'progress':
        this.onProgress(ev);
        break;
      case 'error':
        this.onError(ev.code, ev.text, ev.id);
        break;
      case 'rejected':
        this.onError(ev.code, ev.reason, ev.id, true);
        break;
      case 'sent':
        this.setState(ev.id, 'sent');
        break;
      case 'delivered':
        this.setState(ev.id, 'delivered');
        break;
      case 'disconnected':
        this.typing = false;
        this.status = {
          kind: 'disconnected',
          reason: ev.reason,
          code: ev.code,
          retryAt: ev.retry_in_ms != null ? Date.now() + ev.retry_in_ms : undefined,
        };
        break;
      case 'access_denied':
        this.typing = false;
        this.clearPairingTimer();
        this.status = { kind: 'access_denied', reason: ev.reason };
        // The banner explains the denial: the `auth_failed` error that preceded it would only repeat it.
        this.notices = this.notices.filter((n) => !AUTH_CODES.has(n.code) && n.text !== ev.reason);
        this.onDenied(ev.reason);
        break;
    }
  }

  private findItem(id: string): TimelineItem | undefined {
    return this.locate(id)?.it;
  }

  /** The item with this id and the timeline it is in. */
  private locate(id: string): { tl: Timeline; it: TimelineItem } | undefined {
    for (const tl of this.timelines.values()) {
      const it = tl.find(id);
      if (it) return { tl, it };
    }
    return undefined;
  }

  private routeTimeline(session?: string | null): Timeline {
    if (session) {
      const conv = this.conversations.find((c) => c.session === session);
      if (conv) return this.timeline(conv.id);
    }
    const id = this.activeConversationId ?? this.conversations[0]?.id ?? `local:${this.profile.id}`;
    return this.timeline(id);
  }

  /** The first unread item of each conversation with unread ones (that arrived during this launch). */
  private firstUnread: Record<string, string> = {};
  /** Conversations whose unread count includes messages counted by the store before this launch. */
  private storedUnread: Record<string, true> = {};
  private readTimers = new Map<string, ReturnType<typeof setTimeout>>();

  /** The conversation was opened: nothing in it is unread any more (here and in the store, so after a restart too);
   *  what was is marked "new" in its list. */
  markRead(conversationId: string): void {
    for (const tl of this.timelines.values()) {
      tl.newFrom = null;
      tl.newCount = 0;
    }
    const tl = this.timeline(conversationId);
    const first = this.firstUnread[conversationId];
    delete this.firstUnread[conversationId];
    if (this.storedUnread[conversationId]) {
      // some of them are from before this launch: counted back from the newest once the history is in
      delete this.storedUnread[conversationId];
      tl.newCount = this.unread[conversationId] ?? 0;
      if (tl.loaded) tl.placeNewLine();
    } else if (first) tl.newFrom = first;
    if (conversationId in this.unread) delete this.unread[conversationId];
    this.saveRead(conversationId, 0);
  }

  /** Tells the store the conversation is read up to its newest message, after `delay` ms (a message that just came is
   *  stored by the shell as it reaches the page). Best effort: a failure only leaves a count to clear next time. */
  private saveRead(conversationId: string, delay: number): void {
    if (conversationId.startsWith('local:')) return;
    clearTimeout(this.readTimers.get(conversationId));
    const run = () => {
      this.readTimers.delete(conversationId);
      this.backend.markRead(conversationId).catch(() => {});
    };
    if (delay <= 0) run();
    else this.readTimers.set(conversationId, setTimeout(run, delay));
  }

  /** Another agent's conversation was opened: this one's "New messages" line goes. */
  leave(): void {
    for (const tl of this.timelines.values()) tl.newFrom = null;
  }

  /** The sidebar's line under a conversation follows its newest message, as the store's `last_preview` does (whose
   *  value shows after a restart): its text's start, or `[attachment]` for a file without text. */
  private setPreview(conversationId: string, item: MessageItem): void {
    const c = this.conversations.find((x) => x.id === conversationId);
    const text = item.text.trim() ? item.text.slice(0, 200) : item.attachments.length ? ATTACHMENT_PREVIEW : '';
    if (c && text && c.preview !== text) c.preview = text;
  }

  private countUnread(tl: Timeline, itemId: string): void {
    const id = tl.conversation.id;
    if (tl.isLocal) return;
    if (this.hooks.isOpen?.(id) !== false) {
      // seen as it comes: read in the store too (so it is not counted unread after a restart)
      this.saveRead(id, 500);
      return;
    }
    this.unread[id] = (this.unread[id] ?? 0) + 1;
    this.firstUnread[id] ??= itemId;
  }

  private onMessage(ev: EventOf<'message'>): void {
    this.markReply();
    const existing = this.findItem(ev.id);
    if (!existing) {
      // A new reply is inserted at once so it keeps its place relative to cards and media.
      const tl = this.routeTimeline(ev.session);
      this.countUnread(tl, ev.id);
      const item = tl.push<MessageItem>({
        type: 'message',
        id: ev.id,
        direction: 'in',
        text: ev.text,
        final: ev.final,
        state: 'received',
        replyTo: ev.reply_to,
        createdAt: Date.now(),
        attachments: [],
      });
      if (ev.final) {
        this.setPreview(tl.conversation.id, item);
        this.onFinal(ev.text);
      }
      return;
    }
    this.pending.set(ev.id, ev);
    if (!this.frameScheduled) {
      this.frameScheduled = true;
      nextFrame(() => this.flush());
    }
  }

  /** Applies the latest text of every streamed message: one paint per frame whatever the edit rate. */
  flush(): void {
    this.frameScheduled = false;
    const batch = [...this.pending.values()];
    this.pending.clear();
    for (const ev of batch) {
      const found = this.locate(ev.id);
      const it = found?.it;
      if (!found || it?.type !== 'message') continue;
      const wasFinal = it.final;
      if (it.text !== ev.text) it.text = ev.text;
      if (ev.reply_to && !it.replyTo) it.replyTo = ev.reply_to;
      if (it.final !== ev.final) it.final = ev.final;
      if (ev.final && !wasFinal) {
        this.setPreview(found.tl.conversation.id, it);
        this.onFinal(ev.text);
      }
    }
  }

  private onFinal(text: string): void {
    this.noteReply(text);
    this.announcement = text.length > 500 ? `${text.slice(0, 500)}…` : text;
    this.hooks.onIncoming?.('reply', text);
    // In a task of its own, after the final text is rendered: read-aloud and the avatar's bubble then walk the
    // tokens the view has just lexed (blocks.ts) instead of lexing the whole reply again inside the render task.
    const hook = this.hooks.onReplyFinal;
    if (hook) setTimeout(() => hook(text), 0);
  }

  private onPrompt(ev: EventOf<'prompt'>): void {
    this.markReply();
    const existing = this.findItem(ev.id);
    if (existing) return;
    this.noteReply(ev.text);
    const tl = this.routeTimeline();
    this.countUnread(tl, ev.id);
    tl.push<CardItem>({
      type: 'card',
      id: ev.id,
      kind: ev.kind,
      text: ev.text,
      options: ev.options ?? [],
      command: ev.command,
      description: ev.description,
      timeoutSeconds: ev.timeout_seconds,
      createdAt: Date.now(),
      answering: null,
    });
    this.hooks.onIncoming?.('card', ev.text);
    this.hooks.onCard?.(ev.text);
  }

  private onMedia(ev: EventOf<'media'>): void {
    this.markReply();
    this.noteReply(ev.caption ?? '');
    const att: Attachment = {
      mediaId: ev.id,
      kind: ev.kind,
      mime: ev.mime,
      filename: ev.filename,
      path: ev.path,
      size: ev.size,
      caption: ev.caption,
    };
    const item: MessageItem = {
      type: 'message',
      id: ev.id,
      direction: 'in',
      text: ev.caption ?? '',
      final: true,
      state: 'received',
      createdAt: Date.now(),
      attachments: [att],
    };
    for (const tl of this.timelines.values()) {
      const idx = tl.items.findIndex((i) => i.id === ev.id && i.type === 'download');
      if (idx >= 0) {
        tl.items[idx] = item;
        delete this.progress[ev.id];
        this.setPreview(tl.conversation.id, item);
        return;
      }
    }
    const tl = this.routeTimeline(ev.session);
    this.countUnread(tl, item.id);
    tl.push(item);
    this.setPreview(tl.conversation.id, item);
    delete this.progress[ev.id];
    this.hooks.onIncoming?.('reply', ev.caption || ev.filename);
    if (ev.kind === 'voice') this.hooks.onVoiceNote?.(ev.path);
  }

  private onProgress(ev: EventOf<'progress'>): void {
    this.progress[ev.id] = { direction: ev.direction, done: ev.done, total: ev.total };
    if (ev.direction === 'down' && !this.findItem(ev.id)) {
      this.routeTimeline().push<DownloadItem>({ type: 'download', id: ev.id, createdAt: Date.now() });
    }
    if (ev.direction === 'up' && ev.total > 0 && ev.done >= ev.total) {
      // Upload finished: the bar goes away, the message shows sent/delivered.
      delete this.progress[ev.id];
    }
  }

  private onError(code: string, text: string, id?: string | null, refusal = false): void {
    // Retry's own business (it sends the message again under a new id): not a failure of anything shown.
    if (code === ID_IN_USE) return;
    if (id) {
      const it = this.findItem(id);
      if (it?.type === 'message') {
        it.error = { code, text };
        const transient = !refusal && TRANSIENT_CODES.has(code);
        if (it.direction === 'out' && !transient) it.state = 'failed';
        if (!transient) delete this.progress[id];
        return;
      }
      if (it?.type === 'card') {
        it.answering = null;
        it.answerError = eventErrorText(code) ?? text;
        return;
      }
      if (it?.type === 'download') {
        for (const tl of this.timelines.values()) tl.remove(id);
        delete this.progress[id];
      }
    }
    if (this.status.kind === 'access_denied' && (AUTH_CODES.has(code) || text === this.status.reason)) return;
    this.notices.push({ id: newId(), code, text });
    if (this.notices.length > 5) this.notices.shift();
  }

  dismissNotice(id: string): void {
    this.notices = this.notices.filter((n) => n.id !== id);
  }

  private setState(id: string, state: 'sent' | 'delivered'): void {
    const it = this.findItem(id);
    if (it?.type !== 'message' || it.direction !== 'out') return;
    // An error for the message wins over any later state: the adapter confirms delivery with a Ping/Pong that can
    // come after the agent's `error{id}`. Only a Retry makes a failed message queued again.
    if (it.state === 'failed') return;
    // Never go backwards (delivered may overtake a late "sent").
    if (state === 'sent' && it.state === 'delivered') return;
    it.state = state;
    if (it.error && TRANSIENT_CODES.has(it.error.code)) it.error = undefined;
  }

  /* ---------- pairing (A-8) ---------- */

  // An unapproved device gets a pairing code for its first message, then nothing until the owner approves it (A-8,
  // spec §10). So a reply is not proof of approval: the help (device id, `hermes pairing approve …`) stays until the
  // agent answers a message the user sent after an earlier reply — and that answer is not about pairing. The
  // approval is kept in the profile (a paired profile never shows the help again) until access is denied.

  /** The agent is doing something (a reply starts, typing, a card, a file): it is not silent. */
  private markReply(): void {
    this.clearPairingTimer();
  }

  /** A whole reply from the agent (a final message, a card, a file): a step of the approval evidence. */
  private noteReply(text: string): void {
    if (this.paired || this.profile.dialect !== 'adapter') return;
    if (isPairingReply(text)) {
      this.pairStage = 1;
      this.pairingNeeded = true;
    } else if (this.pairStage === 2) this.markPaired();
    else this.pairStage = 1;
  }

  /** The user sends a message: a reply to it after an earlier reply is the evidence; no reply at all means the device
   *  is probably not approved (the help shows after {@link PAIRING_WAIT_MS}). */
  private armPairingTimer(): void {
    if (this.paired || this.profile.dialect !== 'adapter') return;
    if (this.pairStage === 1) this.pairStage = 2;
    if (this.pairingTimer || this.status.kind !== 'ready') return;
    this.pairingTimer = setTimeout(() => {
      this.pairingTimer = null;
      if (!this.paired && this.status.kind === 'ready') this.pairingNeeded = true;
    }, PAIRING_WAIT_MS);
  }

  /** Where the stored conversation left the evidence (replies and messages of an earlier run, oldest first); the help
   *  comes back when its newest reply is a pairing code. History alone never proves approval: it may be older than
   *  a denial that cleared it. */
  private noteHistory(items: (MessageItem | CardItem)[]): void {
    if (this.paired || this.profile.dialect !== 'adapter') return;
    let stage: 0 | 1 | 2 = 0;
    let pairingLast = false;
    for (const i of items) {
      if (i.type === 'card' || i.direction === 'in') {
        stage = 1;
        pairingLast = isPairingReply(i.text);
      } else if (stage === 1) stage = 2;
    }
    if (stage > this.pairStage) this.pairStage = stage;
    if (pairingLast) this.pairingNeeded = true;
  }

  private markPaired(): void {
    this.paired = true;
    this.pairingNeeded = false;
    this.clearPairingTimer();
    this.backend
      .setPaired(this.profile.id, true)
      .then((p) => (this.profile = p))
      .catch(() => {}); // kept for this run; the next evidence records it
  }

  /** Access denied (`auth_failed`, close 1008): unless the token alone is to blame, the device may not be approved
   *  (any more): the help shows again and the approval is forgotten until the next evidence. */
  private onDenied(reason: string): void {
    if (this.profile.dialect !== 'adapter' || denialCause(reason) === 'token') return;
    this.pairStage = 0;
    this.pairingNeeded = true;
    if (!this.paired) return;
    this.paired = false;
    this.backend
      .setPaired(this.profile.id, false)
      .then((p) => (this.profile = p))
      .catch(() => {});
  }

  private clearPairingTimer(): void {
    if (this.pairingTimer) clearTimeout(this.pairingTimer);
    this.pairingTimer = null;
  }

  dismissPairing(): void {
    this.pairingNeeded = false;
  }

  /* ---------- home channel (spec §10) ---------- */

  /** "Make this chat home": sends `/sethome` there as a normal message (Hermes then delivers its scheduled messages to
   *  this chat) and keeps the conversation as the profile's home. */
  async makeHome(conversationId: string): Promise<void> {
    const item = await this.sendText(conversationId, '/sethome');
    if (item.state === 'failed') return; // the message says why, with its Retry
    this.homeConversationId = conversationId;
    if (conversationId.startsWith('local:')) return;
    try {
      this.profile = await this.backend.setHome(this.profile.id, conversationId);
    } catch (e) {
      this.notices.push({ id: newId(), code: toBackendError(e).code, text: errorMessage(e) });
    }
  }

  /* ---------- sending ---------- */

  private sessionFor(tl: Timeline): string | undefined {
    return this.profile.dialect === 'v3' && tl.conversation.session ? tl.conversation.session : undefined;
  }

  async sendText(conversationId: string, text: string, replyTo?: string): Promise<MessageItem> {
    const tl = this.timeline(conversationId);
    this.activeConversationId = conversationId;
    const item = tl.push<MessageItem>({
      type: 'message',
      id: newId(),
      direction: 'out',
      text,
      final: true,
      state: 'queued',
      replyTo,
      createdAt: Date.now(),
      attachments: [],
    });
    await this.transmit(tl, item);
    return item;
  }

  async sendFile(conversationId: string, file: FileInfo, caption?: string): Promise<MessageItem> {
    const tl = this.timeline(conversationId);
    this.activeConversationId = conversationId;
    const id = newId();
    const mime = file.mime ?? guessMime(file.name);
    const item = tl.push<MessageItem>({
      type: 'message',
      id,
      direction: 'out',
      text: caption ?? '',
      final: true,
      state: 'queued',
      createdAt: Date.now(),
      attachments: [
        { mediaId: id, kind: kindFromMime(mime), mime, filename: file.name, path: file.path, size: file.size, caption },
      ],
    });
    await this.transmit(tl, item);
    return item;
  }

  /** A recorded voice note (16 kHz mono WAV, A-23): sent as an `audio` command, echoed locally as a voice note. */
  async sendVoice(conversationId: string, clip: { path: string; size: number }): Promise<MessageItem> {
    const item = this.voiceEcho(conversationId, newId(), clip);
    await this.transmit(this.timeline(conversationId), item);
    return item;
  }

  /** Push-to-talk: where the shell sends the clips itself when the key comes up (`voice_stop`), with the ids their
   *  echoes will carry ({@link adoptVoice}); {@link settleVoice} when the stop is over. */
  voiceRoute(conversationId: string): VoiceSendTo {
    const ids = Array.from({ length: MAX_VOICE_PARTS }, () => newId());
    for (const id of ids) this.voiceIds.set(id, []);
    this.armPairingTimer();
    return { profileId: this.profile.id, session: this.sessionFor(this.timeline(conversationId)) ?? null, ids };
  }

  /** The echo of a clip the shell sent (or could not: `clip.error`, shown failed with retry). */
  adoptVoice(conversationId: string, clip: VoiceClip): MessageItem {
    const id = clip.id ?? newId();
    const item = this.voiceEcho(conversationId, id, clip);
    if (clip.error) {
      item.state = 'failed';
      item.error = { code: clip.error.code, text: '' };
    }
    const early = this.voiceIds.get(id);
    this.voiceIds.delete(id);
    for (const ev of early ?? []) this.handle(ev);
    return item;
  }

  /** The stop is over: ids no clip used are forgotten. */
  settleVoice(route: VoiceSendTo): void {
    for (const id of route.ids) this.voiceIds.delete(id);
  }

  private voiceEcho(conversationId: string, id: string, clip: { path: string; size: number }): MessageItem {
    const tl = this.timeline(conversationId);
    this.activeConversationId = conversationId;
    const filename = clip.path.split(/[\\/]/).pop() || 'voice.wav';
    return tl.push<MessageItem>({
      type: 'message',
      id,
      direction: 'out',
      text: '',
      final: true,
      state: 'queued',
      createdAt: Date.now(),
      attachments: [{ mediaId: id, kind: 'voice', mime: 'audio/wav', filename, path: clip.path, size: clip.size }],
    });
  }

  /** The message that sends `id` again (its `retryOf`), if there is one in the conversation. */
  retryOf(conversationId: string, id: string): MessageItem | undefined {
    const tl = this.timelines.get(conversationId);
    for (const i of tl?.items ?? []) if (i.type === 'message' && i.retryOf === id) return i;
    return undefined;
  }

  /** Retry a failed message. The engine decides: one the agent never received goes again under its own id;
   *  one it already has (it refused it: `id_in_use`) goes as a new message marked as the retry of the failed one,
   *  which keeps its error and loses its Retry. */
  async retry(conversationId: string, id: string): Promise<void> {
    const tl = this.timeline(conversationId);
    const it = tl.find(id);
    if (it?.type !== 'message' || it.direction !== 'out' || it.state !== 'failed') return;
    if (this.retryOf(conversationId, it.id)) return;
    const before = { state: it.state, error: it.error };
    it.state = 'queued';
    it.error = undefined;
    if ((await this.transmit(tl, it)) !== ID_IN_USE) return;
    it.state = before.state;
    it.error = before.error;
    const again = tl.push<MessageItem>({
      type: 'message',
      id: newId(),
      direction: 'out',
      text: it.text,
      final: true,
      state: 'queued',
      replyTo: it.replyTo,
      createdAt: Date.now(),
      attachments: it.attachments.map((a) => ({ ...a })),
      retryOf: it.id,
    });
    for (const a of again.attachments) a.mediaId = again.id;
    await this.transmit(tl, again);
  }

  /** Hands the message to the engine; a refusal shows on it. Returns the refusal's code, if any. */
  private async transmit(tl: Timeline, item: MessageItem): Promise<string | null> {
    this.setPreview(tl.conversation.id, item);
    const session = this.sessionFor(tl);
    const att = item.attachments[0];
    const retry_of = item.retryOf ?? undefined;
    const cmd: Command = att?.kind === 'voice'
      ? { cmd: 'audio', path: att.path, id: item.id, session, retry_of }
      : att
      ? { cmd: 'file', path: att.path, caption: item.text || undefined, id: item.id, session, retry_of }
      : { cmd: 'text', text: item.text, reply_to: item.replyTo, id: item.id, session, retry_of };
    this.armPairingTimer();
    try {
      const res = await this.command(cmd);
      if (res?.id && res.id !== item.id) {
        item.serverId = item.id;
        item.id = res.id;
      }
      return null;
    } catch (e) {
      const err = toBackendError(e);
      if (err.code !== ID_IN_USE) {
        item.state = 'failed';
        // (the sentence for the code is what the user reads: the shell's English message is not kept)
        item.error = { code: err.code, text: '' };
      }
      return err.code;
    }
  }

  async cancelTransfer(id: string): Promise<void> {
    try {
      await this.command({ cmd: 'cancel', id });
    } finally {
      delete this.progress[id];
      const it = this.findItem(id);
      if (it?.type === 'download') for (const tl of this.timelines.values()) tl.remove(id);
      else if (it?.type === 'message' && it.direction === 'out' && it.state === 'queued') {
        it.state = 'failed';
        it.error = { code: 'cancelled', text: '' };
      }
    }
  }

  /* ---------- cards (A-13, A-14) ---------- */

  async answer(card: CardItem, optionId: string | undefined, text?: string): Promise<void> {
    if (card.done || card.answering) return;
    card.answering = optionId ?? 'other';
    card.answerError = undefined;
    try {
      await this.command({ cmd: 'prompt', prompt_id: card.id, option_id: optionId, text });
    } catch (e) {
      card.answering = null;
      card.answerError = errorMessage(e);
    }
  }

  /** The countdown reached zero before the server said so: close the card in place. */
  expireLocally(card: CardItem): void {
    if (!card.done) {
      card.done = { expired: true };
      card.answering = null;
    }
  }
}
