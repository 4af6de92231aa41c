import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { renderApp } from './helpers';
import { setLocale } from '../lib/i18n/index.svelte';
import { appErrorText, eventErrorText } from '../lib/errors';

describe('settings → storage: the download limit', () => {
  it('shows the stored limit and saves a new one through app_save_settings', async () => {
    let stored = 500;
    const ipc = await renderApp({
      handlers: {
        app_settings: () => ({ maxDownloadMb: stored }),
        app_save_settings: (a) => {
          stored = (a.settings as { maxDownloadMb: number }).maxDownloadMb;
          return { maxDownloadMb: stored };
        },
      },
    });
    ipc.app.openSettings('storage');
    const field = (await screen.findByLabelText('Largest file to download from an agent')) as HTMLSelectElement;
    await waitFor(() => expect(field.value).toBe('500'));
    expect([...field.options].map((o) => o.text)).toEqual(['100 MB', '500 MB', '1 GB', '2 GB (default)', '5 GB', '10 GB']);
    expect(screen.getByText(/applies from the next connection/)).toBeInTheDocument();

    await fireEvent.change(field, { target: { value: '5120' } });
    await waitFor(() => expect(ipc.calls.find((c) => c.cmd === 'app_save_settings')?.args).toEqual({ settings: { maxDownloadMb: 5120, maxMediaMb: 64, mediaQuotaMb: 2048 } }));
    expect(stored).toBe(5120);
    expect(await screen.findByText('Saved')).toBeInTheDocument();
  });

  it('keeps a limit that is not a preset as its own choice, and says when saving failed', async () => {
    const ipc = await renderApp({
      handlers: {
        app_settings: () => ({ maxDownloadMb: 3000 }),
        app_save_settings: () => Promise.reject({ code: 'disk_full', message: 'No space left on device (os error 28)' }),
      },
    });
    ipc.app.openSettings('storage');
    const field = (await screen.findByLabelText('Largest file to download from an agent')) as HTMLSelectElement;
    await waitFor(() => expect(field.value).toBe('3000'));
    expect(field.selectedOptions[0].text).toBe('3000 MB');
    await fireEvent.change(field, { target: { value: '1024' } });
    expect(await screen.findByRole('alert')).toHaveTextContent(appErrorText('disk_full'));
    expect(document.body.textContent).not.toContain('os error 28');
  });

  it('has the engine’s download errors in every language', () => {
    for (const loc of ['en', 'ru', 'zh'] as const) {
      setLocale(loc);
      for (const code of ['download_too_big', 'download_no_space', 'media_quota_full', 'media_buffer_full'])
        expect(eventErrorText(code), `${loc} ${code}`).toBeTruthy();
    }
    setLocale('ru');
    expect(eventErrorText('media_quota_full')).toContain('Настройки → Хранилище');
    setLocale('zh');
    expect(eventErrorText('media_quota_full')).toContain('设置 → 存储');
    setLocale('en');
    expect(eventErrorText('download_too_big')).toContain('Settings → Storage');
    expect(eventErrorText('media_quota_full')).toBe(
      'The media folder is full: this file from the agent was not saved. Remove files or raise the limit in Settings → Storage.',
    );
  });
});

describe('settings → storage: our media limits (A-3, A-19)', () => {
  it('shows the per-file limit and the media folder quota, and saves each with the other settings kept', async () => {
    let stored = { maxDownloadMb: 500, maxMediaMb: 64, mediaQuotaMb: 2048 };
    const ipc = await renderApp({
      handlers: {
        app_settings: () => ({ ...stored }),
        app_save_settings: (a) => {
          stored = { ...(a.settings as typeof stored) };
          return { ...stored };
        },
      },
    });
    ipc.app.openSettings('storage');
    const perFile = (await screen.findByLabelText('Largest file from an agent (either way)')) as HTMLSelectElement;
    const quota = (await screen.findByLabelText('Media folder limit')) as HTMLSelectElement;
    await waitFor(() => expect([perFile.value, quota.value]).toEqual(['64', '2048']));
    expect(perFile.selectedOptions[0].text).toBe('64 MB (default)');
    expect(quota.selectedOptions[0].text).toBe('2 GB (default)');
    expect(screen.getByText(/The agent cannot raise this/)).toBeInTheDocument();
    expect(screen.getByText(/the message text is kept/)).toBeInTheDocument();

    await fireEvent.change(perFile, { target: { value: '16' } });
    await waitFor(() => expect(stored).toEqual({ maxDownloadMb: 500, maxMediaMb: 16, mediaQuotaMb: 2048 }));
    await fireEvent.change(quota, { target: { value: '10240' } });
    await waitFor(() => expect(stored).toEqual({ maxDownloadMb: 500, maxMediaMb: 16, mediaQuotaMb: 10240 }));
    expect(quota.selectedOptions[0].text).toBe('10 GB');
  });
});
