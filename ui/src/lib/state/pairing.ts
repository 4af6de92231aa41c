// Whether this device is approved by an adapter agent. An unapproved device gets a pairing code for its first
// message, then nothing until the owner approves it (A-8, spec §10). So a reply is not proof of approval: the help
// (device id, `hermes pairing approve …`) stays until the agent answers a message the user sent after an earlier
// reply — and that answer is not about pairing. The approval is kept in the profile (a paired profile never shows the
// help again) until access is denied.
import type { Profile } from '../backend/types';
import { denialCause, isPairingReply } from './agent-text';
import type { ConnStatus } from './session-types';
import type { MessageItem } from './timeline.svelte';

export const PAIRING_WAIT_MS = 15_000;

/** What the evidence reads and sets on its session. */
export interface PairingHost {
  readonly profile: Profile;
  readonly status: ConnStatus;
  /** The agent evidently approved this device (kept in the profile). */
  paired: boolean;
  /** The pairing help is shown. */
  pairingNeeded: boolean;
  /** Keeps the approval (or its loss) in the profile; best effort. */
  savePaired(paired: boolean): void;
}

/** An item of a stored conversation, as the evidence sees it. */
export interface EvidenceItem {
  type: 'message' | 'card';
  direction?: MessageItem['direction'];
  text: string;
}

export class PairingEvidence {
  /** 0 no reply yet; 1 a reply came; 2 the user wrote after a reply (the next reply that is not about pairing shows
   *  the device approved). */
  private stage: 0 | 1 | 2 = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private host: PairingHost) {}

  private get watching(): boolean {
    return !this.host.paired && this.host.profile.dialect === 'adapter';
  }

  /** The agent is doing something (a reply starts, typing, a card, a file): it is not silent. */
  agentActive(): void {
    this.clearTimer();
  }

  /** A whole reply from the agent (a final message, a card, a file): a step of the approval evidence. */
  noteReply(text: string): void {
    if (!this.watching) return;
    if (isPairingReply(text)) {
      this.stage = 1;
      this.host.pairingNeeded = true;
    } else if (this.stage === 2) this.markPaired();
    else this.stage = 1;
  }

  /** The user sends a message: a reply to it after an earlier reply is the evidence; no reply at all means the device
   *  is probably not approved (the help shows after {@link PAIRING_WAIT_MS}). */
  userSent(): void {
    if (!this.watching) return;
    if (this.stage === 1) this.stage = 2;
    if (this.timer || this.host.status.kind !== 'ready') return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.host.paired && this.host.status.kind === 'ready') this.host.pairingNeeded = true;
    }, PAIRING_WAIT_MS);
  }

  /** Where the stored conversation left the evidence (replies and messages of an earlier run, oldest first); the help
   *  comes back when its newest reply is a pairing code. History alone never proves approval: it may be older than
   *  a denial that cleared it. */
  noteHistory(items: EvidenceItem[]): void {
    if (!this.watching) return;
    let stage: 0 | 1 | 2 = 0;
    let pairingLast = false;
    for (const i of items) {
      if (i.type === 'card' || i.direction === 'down') {
        stage = 1;
        pairingLast = isPairingReply(i.text);
      } else if (stage === 1) stage = 2;
    }
    if (stage > this.stage) this.stage = stage;
    if (pairingLast) this.host.pairingNeeded = true;
  }

  private markPaired(): void {
    this.host.paired = true;
    this.host.pairingNeeded = false;
    this.clearTimer();
    this.host.savePaired(true); // kept for this run if it fails; the next evidence records it
  }

  /** Access denied (`auth_failed`, close 1008): unless the token alone is to blame, the device may not be approved
   *  (any more): the help shows again and the approval is forgotten until the next evidence. */
  denied(reason: string): void {
    if (this.host.profile.dialect !== 'adapter' || denialCause(reason) === 'token') return;
    this.stage = 0;
    this.host.pairingNeeded = true;
    if (!this.host.paired) return;
    this.host.paired = false;
    this.host.savePaired(false);
  }

  clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
