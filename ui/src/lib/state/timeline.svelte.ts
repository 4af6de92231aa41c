import type { Conversation, HistoryPage, StoredCard, StoredMessage } from '../backend/types';

/* ---------- Timeline items ---------- */

/** A message as shown: the history's own type (times in ms since the epoch), live ones made the same way. */
export interface MessageItem extends StoredMessage {
  type: 'message';
}

/** A card as shown: the history's own type, and the state of an answer on its way. */
export interface CardItem extends StoredCard {
  type: 'card';
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
export function fromStored(m: StoredMessage): MessageItem {
  return { ...m, type: 'message', attachments: m.attachments ?? [], retryOf: m.retryOf ?? null };
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
  return { ...c, type: 'card', done: c.done ?? undefined, answering: null };
}

/** A history page's messages and cards, oldest first. The page's messages come newest first: reversed before the
 *  (stable) sort, so messages stored in the same millisecond keep the order they were written in. */
export function storedItems(page: HistoryPage): (MessageItem | CardItem)[] {
  const items: (MessageItem | CardItem)[] = [
    ...[...page.messages].reverse().map(fromStored),
    ...(page.cards ?? []).map(fromStoredCard),
  ];
  return items.sort((a, b) => a.createdAt - b.createdAt);
}

/** The stored items not already among `shown`. An item can be there under either of its ids: an agent's message that
 *  came live has the wire id the store keeps as `serverId` (the store's own id is local), and a message the user sent
 *  is shown under the store's id with the id it was sent with as `serverId`. */
export function notShown<T extends MessageItem | CardItem>(stored: T[], shown: TimelineItem[]): T[] {
  const known = new Set<string>();
  for (const i of shown) {
    known.add(i.id);
    if (i.type === 'message' && i.serverId) known.add(i.serverId);
  }
  return stored.filter((m) => !known.has(m.id) && !(m.type === 'message' && m.serverId && known.has(m.serverId)));
}

/** The messages of one conversation, as shown. */
export class Timeline {
  items = $state<TimelineItem[]>([]);
  /** The cursor of the older page (the last page's `next`), `null` when the oldest is loaded. */
  next = $state<string | null>(null);
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
    const incoming = this.items.filter((i) => i.type === 'message' && i.direction === 'down');
    const first = incoming[Math.max(0, incoming.length - this.newCount)];
    if (first) this.newFrom = first.id;
    this.newCount = 0;
  }

  constructor(conversation: Conversation) {
    this.conversation = conversation;
  }

  get hasMore(): boolean {
    return this.next !== null;
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
