import { describe, expect, it } from 'vitest';
import { waitFor } from '@testing-library/svelte';
import { PROFILE, ready, renderApp } from './helpers';

// The end-to-end side (a real notification daemon, window focus) is src-tauri/tests/e2e.rs e2e_notifications_and_tray.
describe('notifications', () => {
  const notifies = (ipc: { calls: { cmd: string; args: Record<string, unknown> }[] }) =>
    ipc.calls.filter((c) => c.cmd === 'notify').map((c) => [c.args.title, c.args.body]);

  it('only while the window is in the background, with generic text in the UI language', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: 'secret 4471', final: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(notifies(ipc)).toEqual([]); // focused

    window.dispatchEvent(new Event('blur'));
    ipc.emit({ event: 'message', id: 'r2', text: 'secret 4472', final: true });
    ipc.emit({ event: 'prompt', id: 'p1', kind: 'exec_approval', text: 'Run it?', command: 'rm -rf /tmp/x', options: [{ id: 'allow', label: 'Allow' }] });
    await waitFor(() => expect(notifies(ipc)).toHaveLength(2));
    expect(notifies(ipc)).toEqual([
      [PROFILE.name, 'New reply'],
      [PROFILE.name, 'The agent needs your approval'],
    ]);

    ipc.app.savePrefs({ locale: 'ru' });
    ipc.emit({ event: 'message', id: 'r3', text: 'secret 4473', final: true });
    await waitFor(() => expect(notifies(ipc)).toHaveLength(3));
    expect(notifies(ipc)[2]).toEqual([PROFILE.name, 'Новый ответ']);
    expect(JSON.stringify(notifies(ipc))).not.toMatch(/secret|rm -rf/);

    ipc.app.savePrefs({ locale: 'en', notifyReply: false });
    ipc.emit({ event: 'message', id: 'r4', text: 'secret 4474', final: true });
    window.dispatchEvent(new Event('focus'));
    ipc.emit({ event: 'prompt', id: 'p2', kind: 'clarify', text: 'Which?', options: [] });
    await new Promise((r) => setTimeout(r, 20));
    expect(notifies(ipc)).toHaveLength(3); // replies turned off, then focused again
  });
});
