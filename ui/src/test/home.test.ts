// Spec §10: Hermes reminds a chat that no home channel is set. Under that reply the app offers "Make this chat home",
// which sends `/sethome` there; the profile keeps the home conversation (`set_home`) and the sidebar marks it.
import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { chatLog, CONV, PROFILE, ready, renderApp, storedMessage } from './helpers';
import { isHomeReminder } from '../lib/state/agent-text';

const REMINDER =
  '📬 No home channel is set for Mobile. A home channel is where Hermes delivers cron job results and cross-platform messages.\n\nType /sethome to make this chat your home channel, or ignore to skip.';
const MARK = 'Home channel: scheduled messages arrive here';
const sidebar = () => document.querySelector('.convs') as HTMLElement;
/** Waits until `text` is in the chat (a reply is also in the live region: one or more). */
const seen = (text: string | RegExp) => waitFor(() => expect(chatLog().queryAllByText(text).length).toBeGreaterThan(0));
const homeMark = () => sidebar().querySelector(`.home-mark[title="${MARK}"]`);

describe('home channel (spec §10)', () => {
  it('the reminder offers "Make this chat home": it sends /sethome there, the profile keeps it, the sidebar marks it', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    expect(homeMark()).toBeNull();
    ipc.emit({ event: 'message', id: 'r1', text: REMINDER, final: true });
    const button = await chatLog().findByRole('button', { name: 'Make this chat home' });
    await fireEvent.click(button);

    await waitFor(() => expect(ipc.commands('text').map((c) => c.text)).toEqual(['/sethome']));
    expect(await chatLog().findByText('This chat is home')).toBeInTheDocument();
    expect(chatLog().queryByRole('button', { name: 'Make this chat home' })).toBeNull();
    const calls = ipc.calls.filter((c) => c.cmd === 'set_home').map((c) => c.args);
    expect(calls).toEqual([{ profileId: 'p1', conversationId: 'c1' }]);
    expect(homeMark()).not.toBeNull();
    expect(within(sidebar()).getByText(MARK)).toBeInTheDocument(); // said to screen readers too

    // Hermes confirms; its answer is no reminder
    ipc.emit({ event: 'message', id: 'r2', text: '✅ Home channel set to **Mobile** (ID: mobile:x).', final: true });
    await seen(/Home channel set to/);
    expect(chatLog().getAllByText('This chat is home')).toHaveLength(1);
  });

  it('a home kept in the profile shows at start (after a restart): the mark and the note under the old reminder', async () => {
    const ipc = await renderApp({
      profiles: [{ ...PROFILE, homeConversationId: CONV.id }],
      history: {
        messages: [
          storedMessage('m1', 'up', 'hello', '2024-06-01T10:00:00Z'),
          storedMessage('m2', 'down', REMINDER, '2024-06-01T10:00:01Z'),
        ],
        cards: [],
      },
    });
    await ready(ipc);
    expect(await chatLog().findByText('This chat is home')).toBeInTheDocument();
    expect(chatLog().queryByRole('button', { name: 'Make this chat home' })).toBeNull();
    expect(homeMark()).not.toBeNull();
  });

  it('a /sethome the engine refuses sets no home: the message shows the failure and the button stays', async () => {
    const ipc = await renderApp({
      handlers: {
        send_command: (args) => {
          const c = args.command as { cmd: string; id?: string };
          if (c.cmd === 'text') throw { code: 'not_connected', message: 'not connected' };
          return { id: c.id };
        },
      },
    });
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: REMINDER, final: true });
    await fireEvent.click(await chatLog().findByRole('button', { name: 'Make this chat home' }));
    await seen('/sethome');
    await waitFor(() => expect(chatLog().getByRole('button', { name: 'Make this chat home' })).not.toBeDisabled());
    expect(ipc.calls.filter((c) => c.cmd === 'set_home')).toEqual([]);
    expect(chatLog().queryByText('This chat is home')).toBeNull();
    expect(homeMark()).toBeNull();
  });

  it('only under the agent’s finished reply, not under the user’s own words', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: '📬 No home channel is set for Mob', final: false });
    await seen(/No home channel is set/);
    expect(chatLog().queryByRole('button', { name: 'Make this chat home' })).toBeNull();
    ipc.emit({ event: 'message', id: 'r1', text: REMINDER, final: true });
    expect(await chatLog().findByRole('button', { name: 'Make this chat home' })).toBeInTheDocument();
    expect(screen.getAllByRole('button', { name: 'Make this chat home' })).toHaveLength(1);
  });

  it('what reads as the reminder: the words anywhere, in any case', () => {
    expect(isHomeReminder(REMINDER)).toBe(true);
    expect(isHomeReminder('Done.\n\n(no HOME channel is SET — try /sethome)')).toBe(true);
    expect(isHomeReminder('Your home channel is this chat.')).toBe(false);
  });
});
