import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { CONV, PROFILE, chatLog, ready, renderApp, storedMessage } from './helpers';
import type { Direction } from '../lib/backend/types';

const V3 = { ...PROFILE, dialect: 'v3' as const };
const ONE = { ...CONV, id: 'c1', title: 'Trip plans', session: '6b2c7f2e-6b1a-4a8e-9c55-1f7b1d0e2a31' };
const TWO = { ...CONV, id: 'c2', title: 'Taxes', session: '0d7f3c1e-2b4a-4c8e-9a55-3f7b1d0e2a99', updatedAt: Date.parse('2024-05-01T10:00:00Z') };

const sidebar = () => document.querySelector('.convs') as HTMLElement;
const row = (title: string) => within(sidebar()).getByText(title).closest('button') as HTMLElement;
const badge = (title: string) => row(title).querySelector('.badge');

describe('unread counts in the sidebar', () => {
  it('count what arrives in a conversation not on screen, and clear when it is opened', async () => {
    const ipc = await renderApp({ profiles: [V3], conversations: [ONE, TWO] });
    await ready(ipc);
    await waitFor(() => expect(row('Trip plans')).toHaveAttribute('aria-current', 'page'));

    ipc.emit({ event: 'message', id: 'r1', text: 'refund arrived', final: true, session: TWO.session });
    ipc.emit({ event: 'message', id: 'r2', text: 'and a second note', final: false, session: TWO.session });
    // later edits of a reply are the same message: still two
    ipc.emit({ event: 'message', id: 'r2', text: 'and a second note, finished', final: true, session: TWO.session });
    await waitFor(() => expect(badge('Taxes')).toHaveTextContent('2'));
    expect(within(row('Taxes')).getByText('2 unread')).toBeInTheDocument(); // for screen readers
    expect(row('Taxes')).toHaveClass('unread');

    // what arrives in the open conversation is seen
    ipc.emit({ event: 'message', id: 'r3', text: 'flight booked', final: true, session: ONE.session });
    await chatLog().findByText('flight booked');
    expect(badge('Trip plans')).toBeNull();

    await fireEvent.click(row('Taxes'));
    await waitFor(() => expect(badge('Taxes')).toBeNull());
    expect(row('Taxes')).not.toHaveClass('unread');
    await chatLog().findByText('refund arrived');
    // a "New messages" line sits just above the first of them
    const line = () => document.querySelector('.new-line');
    await waitFor(() => expect(line()).not.toBeNull());
    const order = [...document.querySelectorAll('.new-line, [data-message-id]')];
    const at = order.findIndex((e) => e.classList.contains('new-line'));
    expect(order[at + 1]?.getAttribute('data-message-id')).toBe('r1');

    // now the other one is in the background
    ipc.emit({ event: 'message', id: 'r4', text: 'hotel confirmed', final: true, session: ONE.session });
    await waitFor(() => expect(badge('Trip plans')).toHaveTextContent('1'));
    expect(within(row('Trip plans')).getByText('1 unread')).toBeInTheDocument();
    // leaving Taxes took its line away; opening Trip plans shows one above 'hotel confirmed'
    await fireEvent.click(row('Trip plans'));
    await chatLog().findByText('hotel confirmed');
    await waitFor(() => expect(document.querySelectorAll('.new-line')).toHaveLength(1));
    await fireEvent.click(row('Taxes'));
    await chatLog().findByText('refund arrived');
    await waitFor(() => expect(document.querySelector('.new-line')).toBeNull()); // nothing new there now
  });
});

describe('unread counts kept across restarts', () => {
  const stored = (id: string, direction: Direction, text: string, minute: number) =>
    storedMessage(id, direction, text, `2024-05-01T10:${String(minute).padStart(2, '0')}:00Z`);

  it('the store\'s count shows at launch; opening the conversation clears it there and puts the line above the first', async () => {
    const history = {
      messages: [
        stored('h1', 'down', 'already read', 1),
        stored('h2', 'up', 'my question', 2),
        stored('h3', 'down', 'first unread answer', 3),
        stored('h4', 'up', 'my follow-up', 4),
        stored('h5', 'down', 'second unread answer', 5),
      ],
      cards: [],
    };
    const ipc = await renderApp({ profiles: [V3], conversations: [ONE, { ...TWO, unread: 2 }], history });
    await ready(ipc);
    await waitFor(() => expect(row('Trip plans')).toHaveAttribute('aria-current', 'page'));
    expect(badge('Taxes')).toHaveTextContent('2');
    expect(badge('Trip plans')).toBeNull();
    // the open one is read, in the store too
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'mark_read' && c.args.conversationId === 'c1')).toBe(true));
    expect(ipc.calls.some((c) => c.cmd === 'mark_read' && c.args.conversationId === 'c2')).toBe(false);

    await fireEvent.click(row('Taxes'));
    await waitFor(() => expect(badge('Taxes')).toBeNull());
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'mark_read' && c.args.conversationId === 'c2')).toBe(true));
    await chatLog().findByText('second unread answer');
    await waitFor(() => expect(document.querySelector('.new-line')).not.toBeNull());
    const order = [...document.querySelectorAll('.new-line, [data-message-id]')];
    const at = order.findIndex((e) => e.classList.contains('new-line'));
    expect(order[at + 1]?.getAttribute('data-message-id')).toBe('h3');
  });

  it('what arrives in the open conversation is marked read in the store as well', async () => {
    const ipc = await renderApp({ profiles: [V3], conversations: [ONE, TWO] });
    await ready(ipc);
    await waitFor(() => expect(row('Trip plans')).toHaveAttribute('aria-current', 'page'));
    await waitFor(() => expect(ipc.calls.filter((c) => c.cmd === 'mark_read')).toHaveLength(1));
    ipc.emit({ event: 'message', id: 'r1', text: 'seen at once', final: true, session: ONE.session });
    await chatLog().findByText('seen at once');
    await waitFor(() => expect(ipc.calls.filter((c) => c.cmd === 'mark_read')).toHaveLength(2), { timeout: 2000 });
    expect(ipc.calls.filter((c) => c.cmd === 'mark_read').map((c) => c.args.conversationId)).toEqual(['c1', 'c1']);
    // one in the background is not
    ipc.emit({ event: 'message', id: 'r2', text: 'not seen yet', final: true, session: TWO.session });
    await waitFor(() => expect(badge('Taxes')).toHaveTextContent('1'));
    await new Promise((r) => setTimeout(r, 700));
    expect(ipc.calls.filter((c) => c.cmd === 'mark_read')).toHaveLength(2);
  });
});

describe('the line under a conversation', () => {
  it('follows its newest message: a final reply, a sent text, a file without text', async () => {
    const ipc = await renderApp({ profiles: [V3], conversations: [{ ...ONE, preview: 'old words' }, TWO] });
    await ready(ipc);
    const preview = (title: string) => row(title).querySelector('.preview')?.textContent;
    expect(preview('Trip plans')).toBe('old words');

    ipc.emit({ event: 'message', id: 'r1', text: 'streaming', final: false, session: TWO.session });
    await screen.findByText('1 unread');
    expect(preview('Taxes')).toBeUndefined(); // not per edit: once the reply is whole
    ipc.emit({ event: 'message', id: 'r1', text: 'streaming is done', final: true, session: TWO.session });
    await waitFor(() => expect(preview('Taxes')).toBe('streaming is done'));
    ipc.emit({ event: 'message', id: 'r9', text: 'It **works**: see [the docs](https://example.com/x)\n\nnext', final: true, session: TWO.session });
    await waitFor(() => expect(preview('Taxes')).toBe('It works: see the docs next')); // the words, not the marks

    const box = document.getElementById('composer-input') as HTMLTextAreaElement;
    await fireEvent.input(box, { target: { value: 'my own words' } });
    await fireEvent.keyDown(box, { key: 'Enter' });
    await waitFor(() => expect(preview('Trip plans')).toBe('my own words'));

    ipc.emit({
      event: 'media',
      id: 'f1',
      kind: 'file',
      mime: 'text/plain',
      filename: 'notes.txt',
      path: '/media/notes.txt',
      size: 5,
      session: ONE.session,
    });
    await waitFor(() => expect(preview('Trip plans')).toBe('Attachment'));
  });
});

describe('keyboard: Alt+↑ / Alt+↓', () => {
  it('open the conversation above or below in the sidebar, across agents, and stop at the ends', async () => {
    const second = { ...PROFILE, id: 'p2', name: 'Bravo', deviceId: 'desktop-00000000000000b2' };
    const ipc = await renderApp({
      profiles: [V3, second],
      conversations: [ONE, TWO, { ...CONV, id: 'c3', profileId: 'p2', title: 'Bravo' }],
    });
    await ready(ipc);
    await waitFor(() => expect(row('Trip plans')).toHaveAttribute('aria-current', 'page'));
    const open = () => document.querySelector('.conv-btn[aria-current="page"]')?.textContent?.trim();
    const key = (k: 'ArrowUp' | 'ArrowDown') => fireEvent.keyDown(window, { key: k, altKey: true });

    await key('ArrowUp'); // already the first
    expect(open()).toContain('Trip plans');
    await key('ArrowDown');
    await waitFor(() => expect(open()).toContain('Taxes'));
    await key('ArrowDown'); // into the next agent's conversations (load them first: the profile is not open yet)
    await waitFor(() => expect(document.querySelectorAll('.profile')[1].querySelector('.conv-btn[aria-current="page"]')).not.toBeNull());
    await key('ArrowDown'); // the last: stays
    expect(document.querySelectorAll('.profile')[1].querySelector('.conv-btn[aria-current="page"]')).not.toBeNull();
    await key('ArrowUp');
    await waitFor(() => expect(open()).toContain('Taxes'));
  });
});
