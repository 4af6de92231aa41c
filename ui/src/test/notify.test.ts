import { describe, expect, it } from 'vitest';
import { waitFor } from '@testing-library/svelte';
import { ready, renderApp } from './helpers';

// The shell raises the notifications (src-tauri/src/notify.rs): they must fire with no page. The end-to-end side (a
// real notification daemon, the window hidden or unfocused, a click that opens the conversation) is
// src-tauri/tests/e2e_resident.rs and e2e.rs e2e_notifications_and_tray.
describe('notifications', () => {
  it('are never raised by the page; its switches and language go to the shell', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    window.dispatchEvent(new Event('blur'));
    ipc.emit({ event: 'message', id: 'r2', text: 'secret 4472', final: true });
    ipc.emit({ event: 'prompt', id: 'p1', kind: 'exec_approval', text: 'Run it?', command: 'rm -rf /tmp/x', options: [{ id: 'allow', label: 'Allow' }] });
    await new Promise((r) => setTimeout(r, 20));
    expect(ipc.calls.filter((c) => c.cmd === 'notify')).toEqual([]);

    ipc.app.savePrefs({ locale: 'ru', notifyReply: false });
    await waitFor(() => expect(ipc.shell.settings).toMatchObject({ locale: 'ru', notifyReply: false, notifyCard: true }));
    ipc.app.savePrefs({ locale: 'en', notifyCard: false });
    await waitFor(() => expect(ipc.shell.settings).toMatchObject({ locale: 'en', notifyReply: false, notifyCard: false }));
  });

  it('the switches shown are the shell’s', async () => {
    const ipc = await renderApp({});
    ipc.shell.settings = { ...ipc.shell.settings, notifyReply: false };
    const { AppState } = await import('../lib/state/app.svelte');
    const app = new AppState(ipc.backend);
    await app.start();
    await waitFor(() => expect(app.prefs.notifyReply).toBe(false));
    expect(app.prefs.notifyCard).toBe(true);
  });
});
