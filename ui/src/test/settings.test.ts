import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { renderApp, PROFILE } from './helpers';
import type { Profile } from '../lib/backend/types';

const TOKEN = 'a3f1c9e0b7d24c6e8f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6a';

describe('settings', () => {
  it('writes the token to the keychain and never keeps it in UI state', async () => {
    let hasToken = false;
    const ipc = await renderApp({
      handlers: {
        list_profiles: () => [{ ...PROFILE, hasToken } as Profile],
        update_profile: (a) => ({ ...PROFILE, ...(a.input as object), hasToken }),
        set_token: () => {
          hasToken = true;
          return null;
        },
      },
    });
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    const dialog = await screen.findByRole('dialog', { name: 'Settings' });
    expect(dialog).toBeInTheDocument();
    expect(screen.getByText('Not set')).toBeInTheDocument();
    expect(screen.getByText(PROFILE.deviceId)).toBeInTheDocument();
    const field = screen.getByLabelText('App token') as HTMLInputElement;
    expect(field.type).toBe('password');
    await fireEvent.input(field, { target: { value: TOKEN } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'set_token')).toBe(true));
    expect(ipc.calls.find((c) => c.cmd === 'set_token')?.args).toEqual({ profileId: 'p1', token: TOKEN, sessionOnly: false });
    expect(await screen.findByText('Stored in keychain')).toBeInTheDocument();
    expect((screen.getByLabelText('App token') as HTMLInputElement).value).toBe('');
    // Nowhere in the DOM, app state or local storage.
    expect(document.body.innerHTML).not.toContain(TOKEN);
    expect(JSON.stringify(localStorage)).not.toContain(TOKEN);
    expect(JSON.stringify(ipc.app.profiles)).not.toContain(TOKEN);
    // The profile reconnects with the new token.
    await waitFor(() => expect(ipc.calls.filter((c) => c.cmd === 'connect').length).toBe(2));
  });

  it('without a keychain it says so and stores for this session only', async () => {
    const ua = vi.spyOn(navigator, 'userAgent', 'get').mockReturnValue('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15');
    onTestFinished(() => ua.mockRestore());
    const ipc = await renderApp({ info: { keychain: { available: false, detail: 'Secret Service not running' } } });
    ipc.app.openSettings('profiles', 'p1');
    expect(await screen.findByText('No system keychain is available, so the token cannot be saved permanently.')).toBeInTheDocument();
    expect(screen.getByText('Secret Service not running')).toBeInTheDocument();
    // and what to do about it (on Linux: the Secret Service)
    expect(screen.getByText(/Start or unlock it, then restart Hermes/)).toBeInTheDocument();
    expect(screen.getByLabelText('Remember for this session only')).toBeChecked();
    await fireEvent.input(screen.getByLabelText('App token'), { target: { value: 'tok' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(ipc.calls.find((c) => c.cmd === 'set_token')?.args).toEqual({ profileId: 'p1', token: 'tok', sessionOnly: true }));
  });

  it('shows backend errors as a sentence for their code (never the raw message) and warns about ws://', async () => {
    const ipc = await renderApp({
      handlers: { update_profile: () => Promise.reject({ code: 'invalid_url', message: 'ws:// to a public address needs “allow insecure”' }) },
    });
    ipc.app.openSettings('profiles', 'p1');
    const url = await screen.findByLabelText('Address');
    await fireEvent.input(url, { target: { value: 'ws://203.0.113.5:8787/ws' } });
    expect(screen.getByText(/Without TLS anyone on the network path/)).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(await screen.findByText(/^This address cannot be used\. Use a ws:\/\/ or wss:\/\/ address/)).toBeInTheDocument();
    expect(screen.queryByText(/allow insecure”/)).toBeNull();
  });

  it('the bundled avatar follows the app theme, not the system one', async () => {
    const width = window.innerWidth;
    window.innerWidth = 1280; // wide enough for the avatar pane
    try {
      const ipc = await renderApp();
      const frame = (await screen.findByTitle('Avatar')) as HTMLIFrameElement;
      expect(frame.getAttribute('src')).toBe('avatar/avatar.html?theme=light');
      ipc.app.savePrefs({ theme: 'dark' });
      await waitFor(() =>
        expect((screen.getByTitle('Avatar') as HTMLIFrameElement).getAttribute('src')).toBe('avatar/avatar.html?theme=dark'),
      );
      ipc.app.savePrefs({ theme: 'system' });
    } finally {
      window.innerWidth = width;
    }
  });

  it('opens with the focus on the selected tab, or on a new agent\'s name', async () => {
    await renderApp();
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    await screen.findByRole('dialog', { name: 'Settings' });
    // the Agents tab, not the first one (General) in the page's order
    expect(document.activeElement).toBe(screen.getByRole('tab', { name: 'Agents' }));
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const add = screen.getByRole('button', { name: 'Add agent' });
    add.focus(); // (a click focuses a button in a browser, not in jsdom)
    await fireEvent.click(add);
    await screen.findByRole('dialog', { name: 'Settings' });
    expect(document.activeElement).toBe(screen.getByRole('textbox', { name: 'Name' }));
    // closed, the focus goes back to what opened it
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(document.activeElement).toBe(add);
  });

  it('theme and language apply at once; Esc closes', async () => {
    const ipc = await renderApp();
    ipc.app.openSettings('appearance');
    await fireEvent.click(await screen.findByLabelText('Dark'));
    expect(document.documentElement.dataset.theme).toBe('dark');
    await fireEvent.change(screen.getByRole('combobox'), { target: { value: 'ru' } });
    expect(await screen.findByRole('dialog', { name: 'Настройки' })).toBeInTheDocument();
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    ipc.app.savePrefs({ locale: 'en' });
  });
});
