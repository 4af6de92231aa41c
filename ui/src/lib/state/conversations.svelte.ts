import { SvelteMap } from 'svelte/reactivity';
import type { Backend } from '../backend/backend';
import { errorMessage } from '../backend/backend';
import type { Conversation, Profile } from '../backend/types';
import { markOnce } from '../util/frame';
import type { SessionHooks } from './session-types';
import {
  ATTACHMENT_PREVIEW,
  HISTORY_PAGE,
  Timeline,
  cardWaiting,
  notShown,
  storedItems,
  type CardItem,
  type MessageItem,
  type TimelineItem,
} from './timeline.svelte';

/** A profile's conversations: their list (drafts, unread counts, previews), their timelines and history pages.
 *  The connection's events and the sending build on it (live.svelte.ts, chat.svelte.ts). */
export class ConversationsSession {
  conversations = $state<Conversation[]>([]);
  conversationsLoaded = $state(false);
  /** Replies, files and cards that arrived in each conversation while another one was on screen (this run). */
  unread = $state<Record<string, number>>({});
  /** The agent evidently approved this device (A-8; kept in the profile). */
  paired = $state(false);
  /** The conversation made the agent's home channel (`/sethome`; kept in the profile). */
  homeConversationId = $state<string | null>(null);
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

  protected timelines = new SvelteMap<string, Timeline>();
  /** Conversation to route session-less events to (the last one the user wrote in). */
  activeConversationId: string | null = null;

  constructor(
    protected backend: Backend,
    profile: Profile,
    protected hooks: SessionHooks = {},
  ) {
    this.profile = profile;
  }

  /** What a stored conversation says about the pairing evidence (live.svelte.ts). */
  protected noteHistory(_items: (MessageItem | CardItem)[]): void {}

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
          updatedAt: Date.now(),
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
        updatedAt: Date.now(),
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
      // Live items that arrived before the history stay after the stored ones (and are not shown twice).
      tl.items = [...notShown(stored, tl.items), ...tl.items];
      tl.next = page.next ?? null;
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
    const cursor = tl.next;
    if (cursor === null || tl.loadingOlder || tl.isLocal) return 0;
    tl.loadingOlder = true;
    try {
      const page = await this.backend.history(conversationId, cursor, HISTORY_PAGE);
      const older = notShown(storedItems(page), tl.items);
      tl.items.unshift(...older);
      tl.next = page.next ?? null;
      return older.length;
    } catch (e) {
      tl.loadError = errorMessage(e);
      return 0;
    } finally {
      tl.loadingOlder = false;
    }
  }

  protected findItem(id: string): TimelineItem | undefined {
    return this.locate(id)?.it;
  }

  /** The item with this id and the timeline it is in. */
  protected locate(id: string): { tl: Timeline; it: TimelineItem } | undefined {
    for (const tl of this.timelines.values()) {
      const it = tl.find(id);
      if (it) return { tl, it };
    }
    return undefined;
  }

  protected routeTimeline(session?: string | null): Timeline {
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
  protected setPreview(conversationId: string, item: MessageItem): void {
    const c = this.conversations.find((x) => x.id === conversationId);
    const text = item.text.trim() ? item.text.slice(0, 200) : item.attachments.length ? ATTACHMENT_PREVIEW : '';
    if (c && text && c.preview !== text) c.preview = text;
  }

  protected countUnread(tl: Timeline, itemId: string): void {
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
}
