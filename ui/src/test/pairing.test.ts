// the pairing help survives the pairing code. It stays until the agent answers a message sent after its first
// reply (and that answer is not about pairing); the approval is kept in the profile (`set_paired`), and an access
// denial shows the help again and forgets it.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { chatLog, composer, PROFILE, ready, renderApp, storedMessage } from './helpers';
import { isPairingReply } from '../lib/state/agent-text';

afterEach(() => vi.useRealTimers());

const HELP = 'Waiting for this device to be approved';
const CODE_REPLY =
  "Hi~ I don't recognize you yet!\n\nHere's your pairing code: `K7QW2M9X`\n\nAsk the bot owner to run:\n`hermes pairing approve mobile K7QW2M9X`";

/** Waits until `text` is in the chat (a reply is also in the live region: one or more). */
const seen = (text: string | RegExp) => waitFor(() => expect(chatLog().queryAllByText(text).length).toBeGreaterThan(0));

async function send(text: string) {
  await fireEvent.input(composer(), { target: { value: text } });
  await fireEvent.keyDown(composer(), { key: 'Enter' });
  await seen(text);
}

/** The `set_paired` calls so far, as `paired` values. */
function pairedCalls(ipc: { calls: { cmd: string; args: Record<string, unknown> }[] }) {
  return ipc.calls.filter((c) => c.cmd === 'set_paired').map((c) => [c.args.profileId, c.args.paired]);
}

const helpShown = () => screen.queryByText(HELP) !== null;

describe('pairing help (A-8)', () => {
  it('a8: the pairing-code reply brings the help; it stays until a later message is answered, then the approval is kept', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('hello');
    ipc.emit({ event: 'message', id: 'code', text: CODE_REPLY, final: true });
    expect(await screen.findByText(HELP)).toBeInTheDocument();
    expect(screen.getByText(`hermes pairing approve mobile ${PROFILE.deviceId}`)).toBeInTheDocument();
    expect(screen.getByText(PROFILE.deviceId)).toBeInTheDocument();

    // later messages get no answer until the owner approves: the help stays, even when the agent shows activity
    await send('anyone there?');
    ipc.emit({ event: 'typing', on: true });
    ipc.emit({ event: 'typing', on: false });
    await new Promise((r) => setTimeout(r, 20));
    expect(helpShown()).toBe(true);
    expect(pairedCalls(ipc)).toEqual([]);

    // the answer to a message sent after the pairing reply: approved
    ipc.emit({ event: 'typing', on: true });
    ipc.emit({ event: 'message', id: 'ok', text: 'You said: anyone there?', final: true });
    await waitFor(() => expect(helpShown()).toBe(false));
    expect(pairedCalls(ipc)).toEqual([['p1', true]]);

    // recorded once; later replies change nothing
    await send('thanks');
    ipc.emit({ event: 'message', id: 'ok2', text: 'You said: thanks', final: true });
    await seen('You said: thanks');
    expect(pairedCalls(ipc)).toHaveLength(1);
  });

  it('a8: the first reply alone proves nothing (it may be the pairing code in any words); the answer to the next message does', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('hello');
    ipc.emit({ event: 'message', id: 'r1', text: 'Hello! How can I help?', final: true });
    await seen('Hello! How can I help?');
    expect(pairedCalls(ipc)).toEqual([]);
    // an answer that was not asked for after the first reply is not evidence either
    ipc.emit({ event: 'message', id: 'r2', text: 'Also: the weather is fine.', final: true });
    await seen('Also: the weather is fine.');
    expect(pairedCalls(ipc)).toEqual([]);
    await send('what time is it?');
    ipc.emit({ event: 'message', id: 'r3', text: 'Noon.', final: true });
    await waitFor(() => expect(pairedCalls(ipc)).toEqual([['p1', true]]));
    expect(helpShown()).toBe(false); // the help never had a reason to show
  });

  it('a8: another pairing reply to a later message is no approval either', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('hello');
    ipc.emit({ event: 'message', id: 'c1', text: CODE_REPLY, final: true });
    await screen.findByText(HELP);
    await send('hello again');
    ipc.emit({ event: 'message', id: 'c2', text: 'Too many pairing requests right now~ Please try again later!', final: true });
    await seen(/Too many pairing requests/);
    expect(helpShown()).toBe(true);
    expect(pairedCalls(ipc)).toEqual([]);
  });

  it('a8: silence after a message still brings the help after 15 s, and a reply to a later message ends it', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp();
    await ready(ipc);
    await send('/pairing');
    await vi.advanceTimersByTimeAsync(16_000);
    expect(await screen.findByText(HELP)).toBeInTheDocument();
    // approved meanwhile: the agent answers the next message; that is still only the first reply
    await send('approved?');
    ipc.emit({ event: 'message', id: 'r1', text: 'You said: approved?', final: true });
    await seen('You said: approved?');
    expect(helpShown()).toBe(true);
    await send('and now?');
    ipc.emit({ event: 'message', id: 'r2', text: 'You said: and now?', final: true });
    await waitFor(() => expect(helpShown()).toBe(false));
    expect(pairedCalls(ipc)).toEqual([['p1', true]]);
  });

  it('a8: a paired profile never shows the help: no wait for a reply, no pairing text', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp({ profiles: [{ ...PROFILE, paired: true }] });
    await ready(ipc);
    await send('/pairing');
    await vi.advanceTimersByTimeAsync(20_000);
    ipc.emit({ event: 'message', id: 'r', text: 'Wine pairing: a dry riesling.', final: true });
    await seen('Wine pairing: a dry riesling.');
    expect(helpShown()).toBe(false);
    expect(pairedCalls(ipc)).toEqual([]);
  });

  it('a4/a8: access denied shows the help again and forgets the approval; a denial for the token alone does not', async () => {
    const ipc = await renderApp({ profiles: [{ ...PROFILE, paired: true }] });
    await ready(ipc);
    ipc.emit({ event: 'access_denied', reason: 'close 1008: device desktop-84b9042da9357a03 is not approved' });
    expect(await screen.findByText(HELP)).toBeInTheDocument();
    await waitFor(() => expect(pairedCalls(ipc)).toEqual([['p1', false]]));
    // the command is said once: in the help (the banner leaves it out)
    expect(screen.getAllByText(`hermes pairing approve mobile ${PROFILE.deviceId}`)).toHaveLength(1);
    // dismissed, the banner says it again
    await fireEvent.click(screen.getAllByRole('button', { name: 'Dismiss' })[0]);
    await waitFor(() => expect(helpShown()).toBe(false));
    expect(screen.getAllByText(`hermes pairing approve mobile ${PROFILE.deviceId}`)).toHaveLength(1);
  });

  it('a4: a wrong token is not a pairing matter', async () => {
    const ipc = await renderApp({ profiles: [{ ...PROFILE, paired: true }] });
    ipc.emit({ event: 'access_denied', reason: 'auth_failed: wrong token' });
    expect(await screen.findByText('Check the token in Settings.')).toBeInTheDocument();
    expect(helpShown()).toBe(false);
    expect(pairedCalls(ipc)).toEqual([]);
  });

  it('a8: after a restart, a stored pairing reply brings the help back; the answer to the next message ends it', async () => {
    const ipc = await renderApp({
      history: {
        messages: [
          storedMessage('m1', 'up', 'hello', '2024-06-01T10:00:00Z'),
          storedMessage('m2', 'down', CODE_REPLY, '2024-06-01T10:00:01Z'),
        ],
        cards: [],
      },
    });
    await ready(ipc);
    expect(await screen.findByText(HELP)).toBeInTheDocument();
    await send('approved now?');
    ipc.emit({ event: 'message', id: 'r', text: 'You said: approved now?', final: true });
    await waitFor(() => expect(helpShown()).toBe(false));
    expect(pairedCalls(ipc)).toEqual([['p1', true]]);
  });

  it('a8: v3 has no pairing', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp({ profiles: [{ ...PROFILE, dialect: 'v3' }] });
    await ready(ipc);
    await send('hello');
    ipc.emit({ event: 'message', id: 'code', text: CODE_REPLY, final: true });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(helpShown()).toBe(false);
    expect(pairedCalls(ipc)).toEqual([]);
  });

  it('a8: what reads as a pairing reply', () => {
    expect(isPairingReply(CODE_REPLY)).toBe(true);
    expect(isPairingReply('Too many pairing requests right now~ Please try again later!')).toBe(true);
    expect(isPairingReply('PAIRING CODE: 1234')).toBe(true);
    expect(isPairingReply('You said: hello')).toBe(false);
    expect(isPairingReply('repairing the roof')).toBe(false);
  });
});
