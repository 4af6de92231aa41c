import type { EngineEvent, EventOf, Attachment, Command, Features, Profile } from '../backend/types';
import type { Backend } from '../backend/backend';
import { errorMessage, toBackendError } from '../backend/backend';
import { eventErrorText } from '../errors';
import { markOnce, newId, nextFrame } from '../util/frame';
import { maxMediaBytes } from '../util/media';
import { ConversationsSession } from './conversations.svelte';
import { PairingEvidence } from './pairing';
import type { ConnStatus, Notice, ProgressInfo, SessionHooks } from './session-types';
import type { CardItem, DownloadItem, MessageItem } from './timeline.svelte';
import { cardWaiting } from './timeline.svelte';

/** Error codes that announce an access denial (A-4, G-3): the access-denied banner already says it. */
const AUTH_CODES = new Set(['auth_failed', 'unauthorized', 'forbidden']);
/** `error{id}` codes the engine recovers from by itself (a v3 upload it tries again): the message stays queued. */
export const TRANSIENT_CODES = new Set(['upload_failed']);
/** A refusal of the id a Retry reused: the agent had that message already, so it goes again as a new one. */
export const ID_IN_USE = 'id_in_use';

/** Before the agent's first `ready` (a fresh start, a restart): files and voice on until it says otherwise. What
 *  it accepts afterwards is the engine's `ready.features`, never derived here from `capabilities`. */
export const DEFAULT_FEATURES: Readonly<Features> = { files: true, voice: true };

/** A profile's connection: the engine's events applied to its conversations (streamed edits coalesced per frame),
 *  its status, notices, transfers and cards, and the pairing evidence. Sending builds on it (chat.svelte.ts). */
export class LiveSession extends ConversationsSession {
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
  /** Text for the polite live region: set once per final reply, never per edit. */
  announcement = $state('');
  /** The newest card, for the screen reader's assertive region: a card needs an answer now (its command read out). */
  cardAnnouncement = $state<{ text: string; command?: string | null } | null>(null);

  private pending = new Map<string, EventOf<'message'>>();
  /** Ids the shell is sending push-to-talk clips under (`voice_stop`, {@link ProfileSession.voiceRoute}) → the events
   *  about them that arrived before the clip's echo exists (the engine's `sent` can overtake `voice_stop`'s reply). */
  protected voiceIds = new Map<string, EngineEvent[]>();
  private frameScheduled = false;
  protected pairing: PairingEvidence;

  constructor(backend: Backend, profile: Profile, hooks: SessionHooks = {}) {
    super(backend, profile, hooks);
    const session = this;
    this.pairing = new PairingEvidence({
      get profile() {
        return session.profile;
      },
      get status() {
        return session.status;
      },
      get paired() {
        return session.paired;
      },
      set paired(v: boolean) {
        session.paired = v;
      },
      get pairingNeeded() {
        return session.pairingNeeded;
      },
      set pairingNeeded(v: boolean) {
        session.pairingNeeded = v;
      },
      savePaired: (paired) => {
        this.backend
          .setPaired(this.profile.id, paired)
          .then((p) => (this.profile = p))
          .catch(() => {});
      },
    });
  }

  get maxMediaBytes(): number {
    if (this.featuresKnown) return this.features.max_file_bytes ?? Number.POSITIVE_INFINITY;
    return maxMediaBytes(this.capabilities);
  }

  get queuedCount(): number {
    let n = 0;
    for (const tl of this.timelines.values())
      for (const i of tl.items) if (i.type === 'message' && i.direction === 'up' && i.state === 'queued') n++;
    return n;
  }

  protected override noteHistory(items: (MessageItem | CardItem)[]): void {
    this.pairing.noteHistory(items);
  }

  /* ---------- connection ---------- */

  /** Subscribes to the profile's connection, which the shell owns (it connects every profile with a token at start
   *  and keeps it whether or not a page exists): the shell replays the connection's state first (its last `ready`,
   *  then any `connecting` / `disconnected` / `access_denied` after it), so a rebuilt page shows the truth at once. */
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

  /** Stops the profile's connection in the shell (a deleted profile, a changed token or URL). */
  async disconnect(): Promise<void> {
    this.pairing.clearTimer();
    try {
      await this.backend.disconnect(this.profile.id);
    } finally {
      this.status = { kind: 'idle' };
    }
  }

  reconnectNow(): Promise<unknown> {
    return this.command({ cmd: 'reconnect' });
  }

  protected command(cmd: Command) {
    return this.backend.sendCommand(this.profile.id, cmd);
  }

  /** A card of this profile (in a conversation loaded here) still waits for the user's answer: the avatar shows it. */
  get cardWaiting(): boolean {
    const now = Date.now();
    for (const tl of this.timelines.values()) {
      for (const it of tl.items) if (it.type === 'card' && cardWaiting(it, now)) return true;
    }
    return false;
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
        if (ev.on) this.pairing.agentActive();
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
        this.pairing.clearTimer();
        this.status = { kind: 'access_denied', reason: ev.reason };
        // The banner explains the denial: the `auth_failed` error that preceded it would only repeat it.
        this.notices = this.notices.filter((n) => !AUTH_CODES.has(n.code) && n.text !== ev.reason);
        this.pairing.denied(ev.reason);
        break;
    }
  }

  private onMessage(ev: EventOf<'message'>): void {
    this.pairing.agentActive();
    const existing = this.findItem(ev.id);
    if (!existing) {
      // A new reply is inserted at once so it keeps its place relative to cards and media.
      const tl = this.routeTimeline(ev.session);
      this.countUnread(tl, ev.id);
      const item = tl.push<MessageItem>({
        type: 'message',
        id: ev.id,
        direction: 'down',
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
    this.pairing.noteReply(text);
    this.announcement = text.length > 500 ? `${text.slice(0, 500)}…` : text;
    this.hooks.onIncoming?.('reply', text);
    // In a task of its own, after the final text is rendered: read-aloud and the avatar's bubble then walk the
    // tokens the view has just lexed (blocks.ts) instead of lexing the whole reply again inside the render task.
    const hook = this.hooks.onReplyFinal;
    if (hook) setTimeout(() => hook(text), 0);
  }

  private onPrompt(ev: EventOf<'prompt'>): void {
    this.pairing.agentActive();
    const existing = this.findItem(ev.id);
    if (existing) return;
    this.pairing.noteReply(ev.text);
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
    this.cardAnnouncement = { text: ev.text, command: ev.command };
    this.hooks.onIncoming?.('card', ev.text);
    this.hooks.onCard?.(ev.text);
  }

  private onMedia(ev: EventOf<'media'>): void {
    this.pairing.agentActive();
    this.pairing.noteReply(ev.caption ?? '');
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
      direction: 'down',
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
        if (it.direction === 'up' && !transient) it.state = 'failed';
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
    if (it?.type !== 'message' || it.direction !== 'up') return;
    // An error for the message wins over any later state: the adapter confirms delivery with a Ping/Pong that can
    // come after the agent's `error{id}`. Only a Retry makes a failed message queued again.
    if (it.state === 'failed') return;
    // Never go backwards (delivered may overtake a late "sent").
    if (state === 'sent' && it.state === 'delivered') return;
    it.state = state;
    if (it.error && TRANSIENT_CODES.has(it.error.code)) it.error = undefined;
  }

  dismissPairing(): void {
    this.pairingNeeded = false;
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
