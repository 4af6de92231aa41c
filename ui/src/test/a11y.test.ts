import { describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/svelte';
import { PROFILE, ready, renderApp } from './helpers';

const region = (id: string) => document.querySelector(`[data-testid=${id}]`) as HTMLElement;

describe('what a screen reader hears (live regions)', () => {
  it('a finished reply once, never its streamed tokens', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    expect(region('sr-reply')).toHaveAttribute('aria-live', 'polite');
    ipc.emit({ event: 'message', id: 'r1', text: 'Hel', final: false });
    ipc.emit({ event: 'message', id: 'r1', text: 'Hello the', final: false });
    await screen.findByText(/Hello the/);
    expect(region('sr-reply').textContent).toBe('');
    ipc.emit({ event: 'message', id: 'r1', text: 'Hello there, all done.', final: true });
    await waitFor(() => expect(region('sr-reply').textContent).toBe('Hello there, all done.'));
  });

  it('a card at once (assertive), with its command read out', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    expect(region('sr-card')).toHaveAttribute('aria-live', 'assertive');
    ipc.emit({
      event: 'prompt',
      id: 'k1',
      kind: 'exec_approval',
      text: 'Run this?',
      command: 'make deploy',
      options: [{ id: 'once', label: 'Allow once' }],
    });
    await waitFor(() => expect(region('sr-card').textContent).toBe(`${PROFILE.name} asks: Run this? Command: make deploy`));
    ipc.emit({ event: 'prompt', id: 'k2', kind: 'clarify', text: 'CSV or JSON?', options: [{ id: 'c0', label: 'CSV' }] });
    await waitFor(() => expect(region('sr-card').textContent).toBe(`${PROFILE.name} asks: CSV or JSON?`));
  });

  it('connection changes', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await waitFor(() => expect(region('sr-connection').textContent).toBe(`${PROFILE.name}: Online`));
    ipc.emit({ event: 'disconnected', code: 'lost', reason: 'connection reset', retry_in_ms: 8000 });
    await waitFor(() => expect(region('sr-connection').textContent).toBe(`${PROFILE.name}: Offline`));
    ipc.emit({ event: 'connecting', attempt: 2 });
    await waitFor(() => expect(region('sr-connection').textContent).toBe(`${PROFILE.name}: Connecting…`));
  });
});
