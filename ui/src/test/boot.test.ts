import { describe, expect, it } from 'vitest';
import { setupIpc } from './helpers';
import { TauriBackend } from '../lib/backend/tauri';
import { BOOT_MAX_AGE_MS, type BootSnapshot } from '../lib/backend/boot';
import type { Conversation, HistoryPage, Profile } from '../lib/backend/types';

const profile = { id: 'p1', name: 'Lab' } as unknown as Profile;
const conv = { id: 'c1', profileId: 'p1', title: 'Chat', session: '', updatedAt: Date.parse('2026-11-30T00:00:00Z') } as Conversation;
const page = { messages: [], cards: [], next: 'older' } as HistoryPage;

function boot(createdMs: number): BootSnapshot {
  return { createdMs, profiles: [profile], conversations: { p1: [conv] }, history: { conversationId: 'c1', limit: 50, page } };
}

const w = globalThis as { __HERMES_BOOT__?: unknown };

// The shell's start-up snapshot (src-tauri/src/boot.rs) answers the page's first calls once, without IPC.
describe('start-up snapshot', () => {
  it('answers the first list_profiles, list_conversations and history once each; then the shell answers', async () => {
    const ipc = setupIpc({
      handlers: { list_profiles: () => [], list_conversations: () => [], history: () => ({ messages: [], cards: [] }) },
    });
    w.__HERMES_BOOT__ = boot(performance.timeOrigin + 200);
    const b = new TauriBackend();
    expect(w.__HERMES_BOOT__).toBeUndefined(); // taken: nothing else on the page can read it later
    expect(await b.listProfiles()).toEqual([profile]);
    expect(await b.listConversations('p1')).toEqual([conv]);
    expect(await b.history('c1', null, 50)).toBe(page);
    expect(ipc.calls).toEqual([]);
    // second calls, another page size, a cursor or another conversation: the shell
    await b.listProfiles();
    await b.listConversations('p1');
    await b.history('c1', null, 50);
    expect(ipc.calls.map((c) => c.cmd)).toEqual(['list_profiles', 'list_conversations', 'history']);
  });

  it('only answers the request it holds (the same conversation, page size and no cursor)', async () => {
    const ipc = setupIpc({ handlers: { history: () => ({ messages: [], cards: [] }) } });
    w.__HERMES_BOOT__ = boot(performance.timeOrigin);
    const b = new TauriBackend();
    await b.history('c1', 'm9', 50);
    await b.history('c2', null, 50);
    await b.history('c1', null, 20);
    expect(ipc.calls.length).toBe(3);
    expect(await b.history('c1', null, 50)).toBe(page);
  });

  it('ignores a snapshot older than the page by more than a few seconds (a reload later in the session)', async () => {
    const ipc = setupIpc({ handlers: { list_profiles: () => [] } });
    w.__HERMES_BOOT__ = boot(performance.timeOrigin - BOOT_MAX_AGE_MS - 1000);
    expect(await new TauriBackend().listProfiles()).toEqual([]);
    expect(ipc.calls.map((c) => c.cmd)).toEqual(['list_profiles']);
  });

  it('ignores something that is not a snapshot', async () => {
    const ipc = setupIpc({ handlers: { list_profiles: () => [] } });
    w.__HERMES_BOOT__ = { createdMs: performance.timeOrigin, profiles: 'x' };
    await new TauriBackend().listProfiles();
    expect(ipc.calls.length).toBe(1);
  });
});
