import { describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import App from '../App.svelte';
import { demoShell } from '../lib/backend/demo-agent';
import { tauriBackend } from '../lib/backend/tauri';
import { AppState } from '../lib/state/app.svelte';
import { chatLog, composer } from './helpers';
import { createBackend, inTauri } from '../lib/backend';

// The browser demo: the shared fake shell (the tests' own) with the scripted demo agent, in the real App.
describe('browser demo', () => {
  it('seeds its history, answers a message with a streamed reply and an approval card that can be answered', async () => {
    demoShell('approve').install();
    const backend = tauriBackend();
    const app = new AppState(backend);
    render(App, { props: { backend, app } });
    await app.start();
    expect(await chatLog().findByText(/Can you check why the nightly backup was slow/)).toBeInTheDocument();
    const card = (await screen.findByRole('article', { name: 'Approval needed' }, { timeout: 8000 })) as HTMLElement;
    expect(card.querySelector('pre.command')?.textContent).toContain('systemctl restart app.service');

    await fireEvent.click(within(card).getByRole('button', { name: 'Approve' }));
    expect(await chatLog().findByText(/The service restarted cleanly/, {}, { timeout: 8000 })).toBeInTheDocument();

    const box = composer();
    await fireEvent.input(box, { target: { value: 'hello demo' } });
    await fireEvent.keyDown(box, { key: 'Enter' });
    const echo = (await chatLog().findByText('hello demo')).closest('[data-message-id]') as HTMLElement;
    await waitFor(() => expect(within(echo).getByLabelText('Delivered')).toBeInTheDocument(), { timeout: 8000 });
    expect(await chatLog().findByText(/I'm the built-in demo agent/, {}, { timeout: 8000 })).toBeInTheDocument();
  }, 30_000);

  it('is what a plain browser gets in development: the demo profile, and the page knows it is not in the app', async () => {
    delete (window as { __TAURI_INTERNALS__?: unknown }).__TAURI_INTERNALS__;
    expect(inTauri()).toBe(false);
    const backend = await createBackend();
    expect((await backend.listProfiles()).map((p) => p.name)).toEqual(['Demo agent']);
    expect((await backend.appInfo()).demo).toBe(true);
    expect(inTauri()).toBe(false);
  });
});
