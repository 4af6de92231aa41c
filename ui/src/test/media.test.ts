import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { chatLog, composer, ready, renderApp } from './helpers';

const MiB = 1024 * 1024;

describe('media rendering per kind', () => {
  it('images inline with a lightbox that Esc closes', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'm1', kind: 'image', mime: 'image/png', filename: 'chart.png', caption: 'Chart', path: '/dl/chart.png', size: 20480 });
    const btn = await screen.findByRole('button', { name: 'Enlarge chart.png' });
    const img = btn.querySelector('img') as HTMLImageElement;
    expect(img.getAttribute('src')).toBe('asset://localhost/%2Fdl%2Fchart.png');
    expect(ipc.calls.find((c) => c.cmd === 'file_url')?.args).toEqual({ token: '/dl/chart.png' });
    expect(chatLog().getByText('Chart')).toBeInTheDocument();
    await fireEvent.click(btn);
    const dialog = await screen.findByRole('dialog', { name: 'Chart' });
    expect(dialog.querySelector('img')).not.toBeNull();
    await fireEvent.keyDown(window, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('voice notes get a compact player', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'v1', kind: 'voice', mime: 'audio/ogg', filename: 'note.ogg', path: '/dl/note.ogg', size: 5000 });
    const play = await screen.findByRole('button', { name: 'Play' });
    const audio = document.querySelector('audio') as HTMLAudioElement;
    expect(audio.getAttribute('src')).toContain('note.ogg');
    await fireEvent.click(play);
    expect(audio.play).toHaveBeenCalled();
    expect(screen.getByRole('slider', { name: 'Position in note.ogg' })).toBeInTheDocument();
  });

  it('a voice note shows its length from the WAV header when WebKit reports no duration', async () => {
    const ipc = await renderApp({
      handlers: {
        file_info: (a) => ({ path: a.token, name: 'tone.wav', size: 32044, mime: 'audio/wav', durationMs: 61_500 }),
      },
    });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'v2', kind: 'voice', mime: 'audio/wav', filename: 'tone.wav', path: '/dl/tone.wav', size: 32044 });
    expect(await screen.findByText('1:01')).toBeInTheDocument();
    expect(ipc.calls.find((c) => c.cmd === 'file_info')?.args).toEqual({ token: '/dl/tone.wav' });
  });

  it('videos get a player, documents a file card with Open / Save as / Show in folder', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'vid', kind: 'video', mime: 'video/mp4', filename: 'clip.mp4', path: '/dl/clip.mp4', size: 3 * MiB });
    ipc.emit({ event: 'media', id: 'doc', kind: 'document', mime: 'application/pdf', filename: 'report.pdf', path: '/dl/report.pdf', size: 1_300_000 });
    await waitFor(() => expect(document.querySelector('video')?.getAttribute('src')).toContain('clip.mp4'));
    const name = await screen.findByText('report.pdf');
    const card = name.closest('.file') as HTMLElement;
    expect(within(card).getByText(/1\.2 MB/)).toBeInTheDocument();
    await fireEvent.click(await within(card).findByRole('button', { name: 'Open' }));
    await fireEvent.click(within(card).getByRole('button', { name: 'Save as…' }));
    await fireEvent.click(within(card).getByRole('button', { name: 'Show in folder' }));
    const cmds = ipc.calls.map((c) => [c.cmd, c.args.token]);
    expect(cmds).toContainEqual(['open_file', '/dl/report.pdf']);
    expect(cmds).toContainEqual(['save_file_as', '/dl/report.pdf']);
    expect(cmds).toContainEqual(['reveal_file', '/dl/report.pdf']);
  });

  it('SVG images are never shown inline (they can carry script)', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'media', id: 's', kind: 'image', mime: 'image/svg+xml', filename: 'x.svg', path: '/dl/x.svg', size: 100 });
    await screen.findByText('x.svg');
    expect(document.querySelector('[data-message-id="s"] img')).toBeNull();
  });

  it('download progress shows a bar with cancel that sends cancel{id}', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'progress', id: 'd1', direction: 'down', done: 1 * MiB, total: 4 * MiB });
    const bar = await screen.findByRole('progressbar');
    expect(bar).toHaveAttribute('aria-valuenow', '25');
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(ipc.commands('cancel')).toEqual([{ cmd: 'cancel', id: 'd1' }]);
  });
});

describe('sending files', () => {
  const files: Record<string, { path: string; name: string; size: number; mime?: string }> = {
    '/p/big.jpg': { path: '/p/big.jpg', name: 'big.jpg', size: 12 * MiB, mime: 'image/jpeg' },
    '/p/big-small.jpg': { path: '/p/big-small.jpg', name: 'big-small.jpg', size: 3 * MiB, mime: 'image/jpeg' },
    '/p/notes.txt': { path: '/p/notes.txt', name: 'notes.txt', size: 1200, mime: 'text/plain' },
  };
  const handlers = {
    pick_files: () => ['/p/big.jpg'],
    file_info: (a: Record<string, unknown>) => files[a.token as string],
    downscale_image: () => '/p/big-small.jpg',
  };

  it('explains an over-limit file before sending and offers to downscale an image', async () => {
    const ipc = await renderApp({ handlers });
    await ready(ipc, { max_media_bytes: 8 * MiB });
    await fireEvent.click(screen.getByRole('button', { name: 'Attach files' }));
    expect(await screen.findByText('This file is 12 MB; the agent accepts files up to 8.0 MB. Remove it or make it smaller.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Send' })).toBeDisabled();
    await fireEvent.click(screen.getByRole('button', { name: 'Downscale image' }));
    expect(await screen.findByText('big-small.jpg')).toBeInTheDocument();
    expect(ipc.calls.find((c) => c.cmd === 'downscale_image')?.args).toEqual({ token: '/p/big.jpg', maxBytes: 8 * MiB });
    expect(screen.queryByText(/the agent accepts files up to/)).toBeNull();
    await fireEvent.input(composer(), { target: { value: 'holiday' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Send' }));
    const [cmd] = ipc.commands('file');
    expect(cmd).toMatchObject({ cmd: 'file', path: '/p/big-small.jpg', caption: 'holiday' });
    // Upload progress on the local echo, cancellable.
    ipc.emit({ event: 'progress', id: cmd.id as string, direction: 'up', done: MiB, total: 3 * MiB });
    expect(await screen.findByRole('progressbar', { name: 'Uploading' })).toHaveAttribute('aria-valuenow', '33');
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(ipc.commands('cancel')).toEqual([{ cmd: 'cancel', id: cmd.id }]);
  });

  it('uses the 8 MiB default when the capability is absent', async () => {
    const ipc = await renderApp({ handlers: { ...handlers, pick_files: () => ['/p/big.jpg', '/p/notes.txt'] } });
    await ready(ipc);
    await fireEvent.click(screen.getByRole('button', { name: 'Attach files' }));
    expect(await screen.findByText(/up to 8\.0 MB/)).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Remove big.jpg' }));
    expect(screen.getByRole('button', { name: 'Send' })).not.toBeDisabled();
  });
});
