import type { Command, FileInfo } from '../backend/types';
import { errorMessage, toBackendError } from '../backend/backend';
import type { VoiceClip, VoiceSendTo } from '../backend/voice';
import { newId } from '../util/frame';
import { guessMime, kindFromMime } from '../util/media';
import { ID_IN_USE, LiveSession } from './live.svelte';
import type { MessageItem, Timeline } from './timeline.svelte';

export { DEFAULT_FEATURES } from './live.svelte';
export { PAIRING_WAIT_MS } from './pairing';
export type { ConnStatus, Notice, ProgressInfo, SessionHooks } from './session-types';
export {
  ATTACHMENT_PREVIEW,
  HISTORY_PAGE,
  Timeline,
  cardDeadline,
  cardWaiting,
  fromStored,
  fromStoredCard,
  type CardItem,
  type DownloadItem,
  type MessageItem,
  type TimelineItem,
} from './timeline.svelte';

/** A push-to-talk recording holds up to four messages' worth and is split into ≤ 8 MiB WAVs (A-24): with each
 *  part's header, at most five. */
const MAX_VOICE_PARTS = 5;

/** One profile's live connection and its conversations (conversations.svelte.ts, live.svelte.ts), and what the user
 *  sends: text, files, voice, retries, the home channel. */
export class ProfileSession extends LiveSession {
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
      direction: 'up',
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
      direction: 'up',
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
    this.pairing.userSent();
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
      direction: 'up',
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
    if (it?.type !== 'message' || it.direction !== 'up' || it.state !== 'failed') return;
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
      direction: 'up',
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
    this.pairing.userSent();
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
      else if (it?.type === 'message' && it.direction === 'up' && it.state === 'queued') {
        it.state = 'failed';
        it.error = { code: 'cancelled', text: '' };
      }
    }
  }
}
