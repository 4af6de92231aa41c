import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { PROFILE, ready, renderApp, setupIpc, storedMessage } from './helpers';
import { TauriBackend } from '../lib/backend/tauri';
import { ProfileSession } from '../lib/state/chat.svelte';
import type { Direction, EngineEvent } from '../lib/backend/types';

const APPROVAL: EngineEvent = {
  event: 'prompt',
  id: 'card1',
  kind: 'exec_approval',
  text: 'Run this?',
  command: 'rm  -rf   /tmp/build\n  && make',
  description: 'Cleans the build directory',
  options: [
    { id: 'approve', label: 'Approve', style: 'primary' },
    { id: 'deny', label: 'Denied', style: 'danger' },
  ],
  timeout_seconds: 90,
};

async function card() {
  return (await screen.findByRole('article', { name: 'Approval needed' })) as HTMLElement;
}

afterEach(() => vi.useRealTimers());

describe('approval cards (A-12..A-16)', () => {
  it('shows the exact command verbatim, the description and styled options', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit(APPROVAL);
    const c = await card();
    const pre = c.querySelector('pre.command') as HTMLElement;
    expect(pre.textContent).toBe('rm  -rf   /tmp/build\n  && make');
    expect(within(c).getByText('Cleans the build directory')).toBeInTheDocument();
    expect(within(c).getByRole('button', { name: 'Approve' })).toHaveClass('primary');
    expect(within(c).getByRole('button', { name: 'Denied' })).toHaveClass('danger');
  });

  it('a click sends exactly one prompt frame, never a chat message, and shows the real outcome', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit(APPROVAL);
    const c = await card();
    await fireEvent.click(within(c).getByRole('button', { name: 'Approve' }));
    expect(ipc.commands('prompt')).toEqual([{ cmd: 'prompt', prompt_id: 'card1', option_id: 'approve', text: undefined }]);
    expect(ipc.commands('text')).toHaveLength(0);
    // Buttons are disabled while waiting for prompt_done.
    expect(within(c).getByRole('button', { name: 'Denied' })).toBeDisabled();
    // the server replaced the choice with a safe one: show that.
    ipc.emit({ event: 'prompt_done', prompt_id: 'card1', option_id: 'deny', expired: false });
    expect(await within(c).findByText('Answered: Denied')).toBeInTheDocument();
    expect(within(c).queryByRole('button', { name: 'Approve' })).toBeNull();
    expect(document.querySelectorAll('[data-message-id]')).toHaveLength(0);
  });

  it('counts down from timeout_seconds and expires in place', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit(APPROVAL);
    const c = await card();
    expect(within(c).getByRole('timer')).toHaveTextContent('1:30');
    expect(within(c).getByRole('timer')).not.toHaveClass('urgent');
    await vi.advanceTimersByTimeAsync(61_000);
    await waitFor(() => expect(within(c).getByRole('timer').textContent).toMatch(/0:2[89]/));
    expect(within(c).getByRole('timer')).toHaveClass('urgent');
    await vi.advanceTimersByTimeAsync(30_000);
    expect(await within(c).findByText('Expired')).toBeInTheDocument();
    expect(within(c).getByRole('button', { name: 'Approve' })).toBeDisabled();
    expect(within(c).queryByRole('timer')).toBeNull();
  });

  it('server expiry closes the card: buttons disabled, "Expired"', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit(APPROVAL);
    const c = await card();
    ipc.emit({ event: 'prompt_done', prompt_id: 'card1', expired: true });
    expect(await within(c).findByText('Expired')).toBeInTheDocument();
    for (const b of within(c).getAllByRole('button').filter((b) => b.textContent === 'Approve' || b.textContent === 'Denied'))
      expect(b).toBeDisabled();
  });
});

describe('clarify and generic cards', () => {
  it('"other" opens a text field and sends {prompt_id, option_id: "other", text}', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({
      event: 'prompt',
      id: 'q1',
      kind: 'clarify',
      text: 'Which format?',
      options: [
        { id: 'c0', label: 'CSV' },
        { id: 'other', label: '✏️ Your own answer' },
      ],
    });
    const c = (await screen.findByRole('article', { name: 'Question' })) as HTMLElement;
    await fireEvent.click(within(c).getByRole('button', { name: '✏️ Your own answer' }));
    expect(ipc.commands('prompt')).toHaveLength(0);
    const field = within(c).getByLabelText('Your answer');
    await fireEvent.input(field, { target: { value: 'Parquet please' } });
    await fireEvent.click(within(c).getByRole('button', { name: 'Send answer' }));
    expect(ipc.commands('prompt')).toEqual([{ cmd: 'prompt', prompt_id: 'q1', option_id: 'other', text: 'Parquet please' }]);
    expect(ipc.commands('text')).toHaveLength(0);
  });

  it('unknown kinds get the generic card', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'prompt', id: 'g1', kind: 'slash_confirm_v9', text: 'Proceed?', options: [{ id: 'y', label: 'Yes' }] });
    const c = (await screen.findByRole('article', { name: 'Action requested' })) as HTMLElement;
    await fireEvent.click(within(c).getByRole('button', { name: 'Yes' }));
    expect(ipc.commands('prompt')[0]).toMatchObject({ prompt_id: 'g1', option_id: 'y' });
  });
});

describe('cards in the history (kept by the store)', () => {
  const ago = (ms: number) => Date.now() - ms;
  const msg = (id: string, direction: Direction, text: string, msAgo: number) => storedMessage(id, direction, text, ago(msAgo));
  const options = [
    { id: 'approve', label: 'Approve', style: 'primary' },
    { id: 'deny', label: 'Deny', style: 'danger' },
  ];

  it('show in time order with their outcome, and one still waiting can be answered after a restart', async () => {
    const history = {
      messages: [msg('m1', 'up', 'clean up please', 600_000), msg('m2', 'down', 'done cleaning', 300_000), msg('m3', 'up', 'now build it', 60_000)],
      cards: [
        { id: 'old', kind: 'exec_approval', text: 'Run the cleanup?', options, command: 'rm -rf build/', timeoutSeconds: 300, createdAt: ago(500_000), done: { optionId: 'approve', expired: false } },
        { id: 'now', kind: 'exec_approval', text: 'Run the build?', options, command: 'cargo build', timeoutSeconds: 300, createdAt: ago(30_000) },
      ],
    };
    const ipc = await renderApp({ history });
    await ready(ipc);
    await waitFor(() => expect(document.querySelectorAll('article[aria-label="Approval needed"]')).toHaveLength(2));
    const cards = [...document.querySelectorAll('article[aria-label="Approval needed"]')] as HTMLElement[];
    // in time order among the messages
    const order = [...document.querySelectorAll('[data-message-id], article')].map((e) =>
      e.getAttribute('data-message-id') ?? e.textContent?.match(/Run the \w+/)?.[0],
    );
    expect(order.filter(Boolean)).toEqual(['m1', 'Run the cleanup', 'm2', 'm3', 'Run the build']);
    expect(cards[0].textContent).toContain('Answered: Approve');
    expect([...cards[0].querySelectorAll('button')].some((b) => b.textContent?.trim() === 'Approve')).toBe(false);
    // the waiting one: its countdown goes on from when it was shown, and an answer goes to the agent
    const approve = [...cards[1].querySelectorAll('button')].find((b) => b.textContent?.trim() === 'Approve') as HTMLButtonElement;
    expect(approve.disabled).toBe(false);
    await fireEvent.click(approve);
    expect(ipc.commands('prompt')).toEqual([{ cmd: 'prompt', prompt_id: 'now', option_id: 'approve', text: undefined }]);
  });

  it("a card still waiting after a restart is asked in the avatar's bubble again; an answered or late one is not", async () => {
    const asked = async (cards: object[]) => {
      setupIpc({ history: { messages: [msg('m1', 'up', 'build it', 60_000)], cards } as never });
      const lines: string[] = [];
      const session = new ProfileSession(new TauriBackend(), PROFILE, { onCard: (text) => lines.push(text) });
      await session.loadHistory('c1');
      return lines;
    };
    const waiting = { id: 'now', kind: 'exec_approval', text: 'Run the build?', options, timeoutSeconds: 300, createdAt: ago(30_000) };
    expect(await asked([waiting])).toEqual(['Run the build?']);
    expect(await asked([{ ...waiting, timeoutSeconds: null }])).toEqual(['Run the build?']);
    expect(await asked([{ ...waiting, done: { optionId: 'approve', expired: false } }])).toEqual([]);
    expect(await asked([{ ...waiting, createdAt: ago(600_000) }])).toEqual([]); // its 5 minutes ran out
    // not the newest thing in the conversation: the user has moved on
    expect(await asked([{ ...waiting, createdAt: ago(120_000) }])).toEqual([]);
  });

  it('a waiting card whose time ran out while the app was closed shows as expired', async () => {
    const history = {
      messages: [msg('m1', 'up', 'deploy', 900_000)],
      cards: [{ id: 'late', kind: 'exec_approval', text: 'Deploy now?', options, timeoutSeconds: 300, createdAt: ago(600_000) }],
    };
    const ipc = await renderApp({ history });
    await ready(ipc);
    const c = await card();
    expect(await within(c).findByText('Expired')).toBeInTheDocument();
    expect(within(c).getByRole('button', { name: 'Approve' })).toBeDisabled();
  });
});
