import { afterEach, describe, expect, it, vi } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { composer, ready, renderApp, PROFILE } from './helpers';

afterEach(() => vi.useRealTimers());

describe('connection banner', () => {
  it('shows connecting and reconnect attempts', async () => {
    const ipc = await renderApp();
    ipc.emit({ event: 'connecting', attempt: 1 });
    expect(await screen.findByText('Connecting to Atlas…')).toBeInTheDocument();
    ipc.emit({ event: 'connecting', attempt: 3 });
    expect(await screen.findByText('Reconnecting… (attempt 3)')).toBeInTheDocument();
    ipc.emit({ event: 'ready', session: 's', capabilities: {}, features: { files: true, voice: true } });
    await waitFor(() => expect(screen.queryByText(/Reconnecting/)).toBeNull());
  });

  it('counts down to the next attempt and offers Retry now', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'disconnected', code: 'lost', reason: 'connection reset', retry_in_ms: 8000 });
    expect(await screen.findByText('The connection to agent.example.com:443 was lost')).toBeInTheDocument();
    expect(screen.getByText('Trying again in 8 s')).toBeInTheDocument();
    expect(screen.queryByText('connection reset')).toBeNull();
    await vi.advanceTimersByTimeAsync(3000);
    expect(await screen.findByText('Trying again in 5 s')).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Retry now' }));
    expect(ipc.commands('reconnect')).toHaveLength(1);
  });

  it('offline with the number of queued messages', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'disconnected', code: 'unreachable', reason: 'network down' });
    expect((await screen.findAllByText('Offline')).length).toBeGreaterThan(0);
    for (const text of ['one', 'two']) {
      await fireEvent.input(composer(), { target: { value: text } });
      await fireEvent.keyDown(composer(), { key: 'Enter' });
    }
    expect(await screen.findByText('2 messages waiting')).toBeInTheDocument();
  });

  it('access denied: the reason, the token hint and the pairing command', async () => {
    const ipc = await renderApp();
    ipc.emit({ event: 'access_denied', reason: 'close 1008: not allowed' });
    const alert = await screen.findByText('No access to the agent');
    expect(alert).toBeInTheDocument();
    expect(screen.getByText('close 1008: not allowed')).toBeInTheDocument();
    expect(screen.getByText('Check the token in Settings.')).toBeInTheDocument();
    expect(screen.getByText(`hermes pairing approve mobile ${PROFILE.deviceId}`)).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Open settings' }));
    expect(await screen.findByRole('dialog', { name: 'Settings' })).toBeInTheDocument();
  });

  it('access denied for a wrong token only points at the token', async () => {
    const ipc = await renderApp();
    ipc.emit({ event: 'access_denied', reason: 'auth_failed: bad token' });
    expect(await screen.findByText('Check the token in Settings.')).toBeInTheDocument();
    expect(screen.queryByText(/hermes pairing approve/)).toBeNull();
  });

  it('access denied is said once: the auth_failed error before it does not add a second line', async () => {
    const ipc = await renderApp();
    ipc.emit({ event: 'error', code: 'auth_failed', text: 'wrong token' });
    ipc.emit({ event: 'access_denied', reason: 'wrong token' });
    expect(await screen.findByText('No access to the agent')).toBeInTheDocument();
    expect(screen.getAllByText('wrong token')).toHaveLength(1);
    // and not after it either
    ipc.emit({ event: 'error', code: 'auth_failed', text: 'still wrong' });
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.queryByText('still wrong')).toBeNull();
    expect(screen.queryByText('auth_failed')).toBeNull();
  });

  it('a notice with a known code reads as a sentence', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'error', code: 'rate_limited', text: 'slow down' });
    expect(await screen.findByText('Too many messages — wait a moment and retry.')).toBeInTheDocument();
    expect(screen.queryByText('rate_limited')).toBeNull();
  });

  it('errors without an id appear as dismissable notices', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'error', code: 'device_offline', text: 'cron could not deliver' });
    expect(await screen.findByText('cron could not deliver')).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(screen.queryByText('cron could not deliver')).toBeNull());
  });
});

describe('pairing screen (A-8)', () => {
  it('appears ~15 s after the first message when no reply came, with device id and command', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp();
    await ready(ipc);
    await fireEvent.input(composer(), { target: { value: 'hello?' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(screen.queryByText('Waiting for this device to be approved')).toBeNull();
    await vi.advanceTimersByTimeAsync(6_000);
    expect(await screen.findByText('Waiting for this device to be approved')).toBeInTheDocument();
    const cmd = `hermes pairing approve mobile ${PROFILE.deviceId}`;
    expect(screen.getByText(cmd)).toBeInTheDocument();
    await fireEvent.click(screen.getAllByRole('button', { name: 'Copy command' })[0]);
    expect(navigator.clipboard.writeText).toHaveBeenCalledWith(cmd);
    // The pairing-code reply is no approval: the help stays (pairing.test.ts follows it to the end).
    ipc.emit({ event: 'message', id: 'r', text: 'Pairing code: 1234', final: true });
    expect((await screen.findAllByText('Pairing code: 1234')).length).toBeGreaterThan(0);
    expect(screen.getByText('Waiting for this device to be approved')).toBeInTheDocument();
  });

  it('does not appear when the agent answers', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const ipc = await renderApp();
    await ready(ipc);
    await fireEvent.input(composer(), { target: { value: 'hello?' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    ipc.emit({ event: 'typing', on: true });
    await vi.advanceTimersByTimeAsync(20_000);
    expect(screen.queryByText('Waiting for this device to be approved')).toBeNull();
  });
});
