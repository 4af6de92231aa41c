import { describe, expect, it } from 'vitest';
import { setupIpc, storedMessage, PROFILE } from './helpers';
import { tauriBackend } from '../lib/backend/tauri';
import { HISTORY_PAGE, ProfileSession } from '../lib/state/chat.svelte';
import type { HistoryPage } from '../lib/backend/types';

// A history page carries the cursor of the older one (`next`, opaque): the UI hands it back as it came.
describe('history pages', () => {
  it('loads older pages with the cursor the last page gave, until a page has none', async () => {
    const pages: Record<string, HistoryPage> = {
      first: { messages: [storedMessage('m3', 'down', 'newest', 3000), storedMessage('m2', 'up', 'middle', 2000)], cards: [], next: 'cur:2000:2' },
      'cur:2000:2': { messages: [storedMessage('m1', 'up', 'oldest', 1000)], cards: [] },
    };
    const ipc = setupIpc({ handlers: { history: (a) => pages[(a.cursor as string | null) ?? 'first'] } });
    const s = new ProfileSession(tauriBackend(), PROFILE);
    await s.loadHistory('c1');
    const tl = s.timeline('c1');
    expect(tl.items.map((i) => i.id)).toEqual(['m2', 'm3']);
    expect(tl.hasMore).toBe(true);

    expect(await s.loadOlder('c1')).toBe(1);
    expect(tl.items.map((i) => i.id)).toEqual(['m1', 'm2', 'm3']);
    expect(tl.items.map((i) => i.createdAt)).toEqual([1000, 2000, 3000]);
    expect(tl.hasMore).toBe(false);
    expect(await s.loadOlder('c1')).toBe(0); // the oldest is in: nothing more is asked
    expect(ipc.calls.filter((c) => c.cmd === 'history').map((c) => c.args)).toEqual([
      { conversationId: 'c1', cursor: null, limit: HISTORY_PAGE },
      { conversationId: 'c1', cursor: 'cur:2000:2', limit: HISTORY_PAGE },
    ]);
  });
});

describe('history and what came live', () => {
  it("an agent's message that came live before its conversation's history is shown once (the store keeps its wire id as serverId)", async () => {
    const stored = (id: string, serverId: string, text: string, at: number) => ({ ...storedMessage(id, 'down', text, at), serverId });
    const pages: Record<string, HistoryPage> = {
      first: { messages: [stored('local-2', 'w2', 'Stand-up in 5 minutes', 2000), stored('local-1', 'w1', 'earlier', 1000)], cards: [], next: 'older' },
      older: { messages: [stored('local-1', 'w1', 'earlier', 1000), stored('local-0', 'w0', 'oldest', 500)], cards: [] },
    };
    setupIpc({ handlers: { history: (a) => pages[(a.cursor as string | null) ?? 'first'] } });
    const s = new ProfileSession(tauriBackend(), PROFILE);
    s.activeConversationId = 'c1';
    // it came while the conversation's history was not loaded (the window hidden, another conversation open)
    s.handle({ event: 'message', id: 'w2', text: 'Stand-up in 5 minutes', final: true });
    await s.loadHistory('c1');
    const tl = s.timeline('c1');
    expect(tl.items.map((i) => i.type === 'message' && i.text)).toEqual(['earlier', 'Stand-up in 5 minutes']);
    // an older page that repeats a message already shown (same created_at) adds only what is new
    expect(await s.loadOlder('c1')).toBe(1);
    expect(tl.items.map((i) => i.type === 'message' && i.text)).toEqual(['oldest', 'earlier', 'Stand-up in 5 minutes']);
  });
});
