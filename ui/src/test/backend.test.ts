import { describe, expect, it, vi } from 'vitest';
import { setupIpc } from './helpers';
import { TauriBackend } from '../lib/backend/tauri';
import { BackendError } from '../lib/backend/backend';
import { tauriBackend } from '../lib/backend/tauri';
import { commands } from '../bindings';
import type { EngineEvent } from '../lib/backend/types';

describe('Tauri backend', () => {
  it('uses the shell command names with camelCase arguments', async () => {
    const ipc = setupIpc({ handlers: { search: () => [] } });
    const b = new TauriBackend();
    await b.setToken('p1', 'secret', true);
    await b.history('c1', 'm9', 50);
    await b.search('backup', 'p1');
    await b.sendCommand('p1', { cmd: 'prompt', prompt_id: 'x', option_id: 'approve' });
    await b.downscaleImage('/a.jpg', 1000);
    await b.exportConversation('c1', 'markdown');
    expect(ipc.calls.map((c) => [c.cmd, c.args])).toEqual([
      ['set_token', { profileId: 'p1', token: 'secret', sessionOnly: true }],
      ['history', { conversationId: 'c1', cursor: 'm9', limit: 50 }],
      ['search', { query: 'backup', profileId: 'p1' }],
      ['send_command', { profileId: 'p1', command: { cmd: 'prompt', prompt_id: 'x', option_id: 'approve' } }],
      ['downscale_image', { token: '/a.jpg', maxBytes: 1000 }],
      ['export_conversation', { id: 'c1', format: 'markdown' }],
    ]);
  });

  it('has every generated command, under its generated name', () => {
    const b = tauriBackend() as unknown as Record<string, unknown>;
    for (const name of Object.keys(commands)) expect(typeof b[name], name).toBe('function');
  });

  it('answers a command that cannot fail with its value, and a failing one with a BackendError', async () => {
    setupIpc({
      handlers: {
        check_for_updates: () => ({ status: 'failed', current: '0.1.0', message: 'offline' }),
        app_save_settings: () => Promise.reject({ code: 'io_error', message: 'disk' }),
        file_url: () => 'asset://x',
      },
    });
    const b = tauriBackend();
    expect(await b.checkForUpdates()).toEqual({ status: 'failed', current: '0.1.0', message: 'offline' });
    expect(await b.fileUrl('/a')).toBe('asset://x');
    const err = await b.appSaveSettings({ maxDownloadMb: 1, maxMediaMb: 64, mediaQuotaMb: 2048 } as never).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.code).toBe('io_error');
  });

  it('turns {code, message} errors into BackendError', async () => {
    setupIpc({ handlers: { list_profiles: () => Promise.reject({ code: 'store', message: 'Database is locked' }) } });
    const err = await new TauriBackend().listProfiles().catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.code).toBe('store');
    expect(err.message).toBe('Database is locked');
  });

  it('delivers channel events in order, even when they arrive out of order', async () => {
    let id = 0;
    setupIpc({ handlers: { connect: (a) => ((id = (a.onEvent as { id: number }).id), null) } });
    const seen: EngineEvent[] = [];
    await new TauriBackend().connect('p1', (e) => seen.push(e));
    const run = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (i: number, d: unknown) => void } }).__TAURI_INTERNALS__.runCallback;
    run(id, { index: 1, message: { event: 'typing', on: true } });
    run(id, { index: 0, message: { event: 'connecting', attempt: 1 } });
    expect(seen.map((e) => e.event)).toEqual(['connecting', 'typing']);
  });
});

void vi;
