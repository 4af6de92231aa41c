import type { Direction } from '../backend/types';

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
  direction: Direction;
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
