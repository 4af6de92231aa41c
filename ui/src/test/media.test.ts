import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { chatLog, composer, ready, renderApp } from './helpers';
import { isVoiceNote } from '../lib/util/media';

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
    expect(screen.getByRole('slider', { name: 'Position in Voice message' })).toBeInTheDocument();
  });

  it('a voice note shows its length from the WAV header when WebKit reports no duration', async () => {
    const ipc = await renderApp({
      handlers: {
        file_info: (a) => ({ path: a.token, name: 'tone.wav', size: 32044, mime: 'audio/wav', durationMs: 61_500 }),
      },
    });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'v2', kind: 'voice', mime: 'audio/wav', filename: 'tone.wav', path: '/dl/tone.wav', size: 32044 });
    // (61.5 s: a whole length is rounded, formatClipLength)
    expect(await screen.findByText('1:02')).toBeInTheDocument();
    expect(ipc.calls.find((c) => c.cmd === 'file_info')?.args).toEqual({ token: '/dl/tone.wav' });
  });

  it('our own recording reads "Voice message · 0:03" with its waveform, not voice-<stamp>.wav', async () => {
    const waveform = Array.from({ length: 48 }, (_, i) => (i * 5) % 256);
    const ipc = await renderApp({
      handlers: {
        file_info: (a) => ({ path: a.token, name: 'voice-1796174446429.wav', size: 96_044, mime: 'audio/wav', durationMs: 3_000, waveform }),
      },
    });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'r1', kind: 'audio', mime: 'audio/wav', filename: 'voice-1796174446429.wav', path: '/data/media/voice-1796174446429.wav', size: 96_044 });
    expect(await chatLog().findByText('Voice message · 0:03')).toBeInTheDocument();
    expect(chatLog().queryByText('voice-1796174446429.wav')).toBeNull();
    // the real name stays one hover away (and in Save as)
    expect(chatLog().getByText('Voice message · 0:03')).toHaveAttribute('title', 'voice-1796174446429.wav');
    expect(document.querySelector('.voice input')?.getAttribute('aria-label')).toBe('Position in Voice message · 0:03');
    const bars = document.querySelectorAll('.voice .bars span');
    expect(bars).toHaveLength(48);
    expect((bars[0] as HTMLElement).style.height).toBe('12%'); // silence keeps a visible stub
    expect((bars[40] as HTMLElement).style.height).toBe(`${(200 / 255) * 100}%`);
    // nothing played yet: no bar marked played
    expect(document.querySelectorAll('.voice .bars span.played')).toHaveLength(0);
  });

  it('a short voice note is never "0:00", and one the agent heard as 3.0 s reads 0:03', async () => {
    const lengths: Record<string, number> = {
      '/data/media/voice-1796174446001.wav': 440,
      '/data/media/voice-1796174446002.wav': 2_960,
    };
    const ipc = await renderApp({
      handlers: {
        file_info: (a) => ({ path: a.token, name: 'v.wav', size: 14_000, mime: 'audio/wav', durationMs: lengths[a.token as string] }),
      },
    });
    await ready(ipc);
    for (const [i, path] of Object.keys(lengths).entries()) {
      ipc.emit({ event: 'media', id: `s${i}`, kind: 'audio', mime: 'audio/wav', filename: path.split('/').pop()!, path, size: 14_000 });
    }
    expect(await chatLog().findByText('Voice message · 0:01')).toBeInTheDocument();
    expect(await chatLog().findByText('Voice message · 0:03')).toBeInTheDocument();
    expect(chatLog().queryByText(/0:00/)).toBeNull();
  });

  it('played to its end, a voice note reads its length again (0:03), not the floored position (0:02)', async () => {
    const ipc = await renderApp({
      handlers: { file_info: (a) => ({ path: a.token, name: 'v.wav', size: 94_764, mime: 'audio/wav', durationMs: 2_960 }) },
    });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'e1', kind: 'audio', mime: 'audio/wav', filename: 'voice-1796174446003.wav', path: '/data/media/voice-1796174446003.wav', size: 94_764 });
    expect(await chatLog().findByText('Voice message · 0:03')).toBeInTheDocument();
    const audio = document.querySelector('.voice audio') as HTMLAudioElement;
    const time = () => document.querySelector('.voice .time')?.textContent;
    expect(time()).toBe('0:03');
    // paused halfway (a seek): the position
    audio.currentTime = 1.5;
    audio.dispatchEvent(new Event('timeupdate'));
    await waitFor(() => expect(time()).toBe('0:01'));
    // at its end (the media element stops there, paused)
    audio.currentTime = 2.96;
    audio.dispatchEvent(new Event('timeupdate'));
    await waitFor(() => expect(time()).toBe('0:03'));
  });

  it('an audio file the user attached keeps its name; the agent\'s voice kind is a voice message', async () => {
    const ipc = await renderApp({
      handlers: { file_info: (a) => ({ path: a.token, name: 'x', size: 1, mime: 'audio/wav', durationMs: 65_000 }) },
    });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'a1', kind: 'audio', mime: 'audio/wav', filename: 'voice-memo-final.wav', path: '/dl/voice-memo-final.wav', size: 1000 });
    ipc.emit({ event: 'media', id: 'a2', kind: 'voice', mime: 'audio/ogg', filename: 'reply.ogg', path: '/dl/reply.ogg', size: 1000 });
    expect(await chatLog().findByText('voice-memo-final.wav')).toBeInTheDocument();
    expect(await chatLog().findByText('Voice message · 1:05')).toBeInTheDocument();
    // no waveform from the shell: the plain slider
    expect(document.querySelector('.voice .bars')).toBeNull();
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

describe('isVoiceNote', () => {
  it('knows our recorder\'s names and the agent\'s voice kind, nothing else', () => {
    for (const name of ['voice-1796174446429.wav', 'voice-1796174446429-2.wav', 'voice-1796174446429 (1).wav', 'VOICE-1796174446429.WAV']) {
      expect(isVoiceNote('audio', name), name).toBe(true);
    }
    for (const name of ['voice-1.wav', 'voice-memo.wav', 'voice-1796174446429.mp3', 'my voice-1796174446429.wav', 'voice-1796174446429.wav.exe']) {
      expect(isVoiceNote('audio', name), name).toBe(false);
    }
    expect(isVoiceNote('document', 'voice-1796174446429.wav')).toBe(false);
    expect(isVoiceNote('voice', 'anything.ogg')).toBe(true);
  });
});
