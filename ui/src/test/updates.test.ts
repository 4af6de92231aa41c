import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { renderApp, type IpcOptions } from './helpers';

const NOT_CONFIGURED = /Updates are not configured for this build/;

async function openAbout(handlers: IpcOptions['handlers']) {
  const ipc = await renderApp({ handlers });
  ipc.app.openSettings('about');
  const dialog = await screen.findByRole('dialog', { name: 'Settings' });
  return { ipc, dialog };
}

describe('settings: updates', () => {
  it('checks only when asked, and says clearly when this build has no update endpoint', async () => {
    const { ipc, dialog } = await openAbout({ check_for_updates: () => ({ status: 'not_configured', current: '0.1.0' }) });
    expect(ipc.calls.some((c) => c.cmd === 'check_for_updates')).toBe(false);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Check for updates' }));
    expect(await within(dialog).findByText(NOT_CONFIGURED)).toBeInTheDocument();
    expect(ipc.calls.filter((c) => c.cmd === 'check_for_updates')).toHaveLength(1);
    // disabled cleanly: no install button, no alert, no second dialog
    expect(within(dialog).queryByRole('button', { name: 'Install and restart' })).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(screen.getAllByRole('dialog')).toHaveLength(1);
  });

  it('up to date', async () => {
    const { dialog } = await openAbout({ check_for_updates: () => ({ status: 'up_to_date', current: '0.1.0' }) });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Check for updates' }));
    expect(await within(dialog).findByText('Hermes 0.1.0 is up to date.')).toBeInTheDocument();
  });

  it('offers a newer version with its notes and installs it on request', async () => {
    const { ipc, dialog } = await openAbout({
      check_for_updates: () => ({ status: 'available', current: '0.1.0', version: '0.2.0', notes: 'Faster voice.\n<img src=x onerror=alert(1)>', date: null }),
      install_update: () => ({ status: 'failed', current: '0.1.0', message: 'the update’s signature is not valid' }),
    });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Check for updates' }));
    expect(await within(dialog).findByText('Hermes 0.2.0 is available (you have 0.1.0).')).toBeInTheDocument();
    // release notes are text, never markup
    expect(within(dialog).getByText(/Faster voice\./).textContent).toContain('<img src=x onerror=alert(1)>');
    expect(dialog.querySelector('img[src="x"]')).toBeNull();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Install and restart' }));
    await waitFor(() => expect(ipc.calls.filter((c) => c.cmd === 'install_update')).toHaveLength(1));
    expect(await within(dialog).findByText('Could not check for updates: the update’s signature is not valid')).toBeInTheDocument();
  });

  it('a failed check or a backend error shows inline, never as a dialog', async () => {
    const { dialog } = await openAbout({ check_for_updates: () => Promise.reject({ code: 'internal', message: 'boom' }) });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Check for updates' }));
    expect(await within(dialog).findByText(/^Could not check for updates: Something went wrong in the app\./)).toBeInTheDocument();
    expect(within(dialog).queryByText(/boom/)).toBeNull();
    expect(screen.getAllByRole('dialog')).toHaveLength(1);
    expect(within(dialog).getByRole('button', { name: 'Check for updates' })).toBeEnabled();
  });

  it('speaks the other languages', async () => {
    const { ipc, dialog } = await openAbout({ check_for_updates: () => ({ status: 'not_configured', current: '0.1.0' }) });
    ipc.app.savePrefs({ locale: 'ru' });
    await fireEvent.click(await within(dialog).findByRole('button', { name: 'Проверить обновления' }));
    expect(await within(dialog).findByText(/Для этой сборки обновления не настроены/)).toBeInTheDocument();
    ipc.app.savePrefs({ locale: 'en' });
  });
});
