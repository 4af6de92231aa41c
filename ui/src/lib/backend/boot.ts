import { markOnce } from '../util/frame';
import type { Conversation, HistoryPage, Profile } from './types';

/** The start-up snapshot the shell hands the main window (src-tauri/src/boot.rs), as `window.__HERMES_BOOT__`. */
export interface BootSnapshot {
  createdMs: number;
  profiles: Profile[];
  conversations: Record<string, Conversation[]>;
  history?: { conversationId: string; limit: number; page: HistoryPage };
}

/** A snapshot older than this (against the page's own navigation start) is ignored: a later reload asks the shell. */
export const BOOT_MAX_AGE_MS = 5000;

/**
 * Answers the page's first `list_profiles`, `list_conversations` and `history` calls from the snapshot, once each,
 * so that the first render can show the conversation without waiting for IPC round trips behind it (launch →
 * interactive). Anything else, or a second call, goes to the shell as usual.
 */
export class BootData {
  private profilesLeft: Profile[] | null = null;
  private conversationsLeft = new Map<string, Conversation[]>();
  private historyLeft: BootSnapshot['history'] | null = null;

  constructor(host: { __HERMES_BOOT__?: unknown } = globalThis as { __HERMES_BOOT__?: unknown }) {
    const s = host.__HERMES_BOOT__ as BootSnapshot | undefined;
    delete host.__HERMES_BOOT__;
    const valid = !!s && Array.isArray(s.profiles) && typeof s.conversations === 'object' && s.conversations !== null;
    const age = valid && typeof performance !== 'undefined' ? performance.timeOrigin - s.createdMs : NaN;
    if (!valid || !(Math.abs(age) < BOOT_MAX_AGE_MS)) return;
    this.profilesLeft = s.profiles;
    for (const [id, list] of Object.entries(s.conversations)) this.conversationsLeft.set(id, list);
    this.historyLeft = s.history ?? null;
  }

  profiles(): Profile[] | null {
    const p = this.profilesLeft;
    this.profilesLeft = null;
    if (p) markOnce('hermes:boot');
    return p;
  }

  conversations(profileId: string): Conversation[] | null {
    const list = this.conversationsLeft.get(profileId) ?? null;
    this.conversationsLeft.delete(profileId);
    return list;
  }

  history(conversationId: string, cursor: string | null, limit: number): HistoryPage | null {
    const h = this.historyLeft;
    if (!h || cursor || h.conversationId !== conversationId || h.limit !== limit) return null;
    this.historyLeft = null;
    return h.page;
  }
}
