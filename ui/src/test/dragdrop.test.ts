import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { mockWindows } from '@tauri-apps/api/mocks';
import type { FileInfo, JsonValue } from '../lib/backend/types';
import { baseName, stagePaths } from '../lib/state/attach';
import { setLocale } from '../lib/i18n/index.svelte';
import { composer, ready, renderApp } from './helpers';

// A drag over the window comes from the shell as Tauri's webview drag events (`tauri://drag-enter|over|drop|leave`:
// the overlay), the dropped files as the shell's own `files-dropped` event with a token for each (grants.rs); the
// page asks `file_info` about each token. These tests fire those events through Tauri's own event-listener path (the
// page's real subscriptions), with a fake shell answering `file_info` (its tokens here look like paths: the page
// never looks inside one but for the name after the last `/`).

type Payload = Record<string, unknown>;

/** A shell's file system: path → what `file_info` answers, or the error it throws. */
type Disk = Record<string, FileInfo | { code: string; message: string }>;

function file(path: string, size: number, mime?: string): FileInfo {
  return { path, name: baseName(path), size, mime };
}

const FOLDER = { code: 'is_folder', message: 'this is a folder; only files can be sent' };

async function renderWithDrops(
  disk: Disk,
  capabilities: Partial<Record<string, JsonValue>> = {},
  /** The system clipboard's image as the shell reads it (`clipboard_image`); none by default. */
  clipboard: { size: number } | null = null,
) {
  mockWindows('main');
  const listeners = new Map<string, number[]>();
  const targets = new Map<string, unknown>();
  const fileInfoCalls: string[] = [];
  const downscaled: { path: string; maxBytes: number }[] = [];
  const written: { filename: string; base64: string }[] = [];
  const clipboardAsked: string[] = [];
  const r = await renderApp({
    handlers: {
      'plugin:event|listen': (a) => {
        const ev = String(a.event);
        targets.set(ev, a.target);
        listeners.set(ev, [...(listeners.get(ev) ?? []), a.handler as number]);
        return a.handler;
      },
      'plugin:event|unlisten': () => null,
      file_info: (a) => {
        const path = String(a.token);
        fileInfoCalls.push(path);
        const hit = disk[path];
        if (!hit) throw { code: 'not_found', message: `No such file or directory (os error 2)` };
        if ('code' in hit) throw hit;
        return hit;
      },
      downscale_image: (a) => {
        const path = String(a.token);
        downscaled.push({ path, maxBytes: Number(a.maxBytes) });
        const small = path.replace(/(\.\w+)$/, '-small$1');
        disk[small] = file(small, Math.floor(Number(a.maxBytes) / 2), 'image/jpeg');
        return small;
      },
      clipboard_image: (a) => {
        clipboardAsked.push(String(a.filename));
        if (!clipboard) return null;
        const path = `/tmp/hermes/${String(a.filename)}`;
        disk[path] = file(path, clipboard.size, 'image/png');
        return path;
      },
      write_temp_file: (a) => {
        written.push({ filename: String(a.filename), base64: String(a.base64) });
        const path = `/tmp/hermes/${String(a.filename)}`;
        disk[path] = file(path, Math.floor((String(a.base64).length * 3) / 4), 'image/png');
        return path;
      },
    },
  });
  ready(r, capabilities);
  await waitFor(() => expect(listeners.has('tauri://drag-drop') && listeners.has('files-dropped')).toBe(true));
  // the shell sends a drop to its window only (`emit_to`): heard by this window's page, not by every page
  expect(targets.get('files-dropped')).toEqual({ kind: 'WebviewWindow', label: 'main' });

  function fire(event: string, payload: Payload) {
    const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } })
      .__TAURI_INTERNALS__;
    for (const id of listeners.get(event) ?? []) internals.runCallback(id, { event, id, payload });
  }
  const at = { x: 400, y: 300 };
  const drag = {
    enter: (paths: string[]) => fire('tauri://drag-enter', { paths, position: at }),
    over: () => fire('tauri://drag-over', { position: at }),
    leave: () => fire('tauri://drag-leave', {}),
    drop: (paths: string[]) => {
      fire('tauri://drag-drop', { paths, position: at });
      fire('files-dropped', { files: paths });
    },
  };
  /** A whole drag as the shell reports it: enter with the paths, a few moves, the drop. */
  const dropFiles = (paths: string[]) => {
    drag.enter(paths);
    drag.over();
    drag.over();
    drag.drop(paths);
  };
  return { ...r, drag, dropFiles, fileInfoCalls, downscaled, written, clipboardAsked };
}

const overlay = () => document.querySelector('.drop');
const attachments = () => screen.queryByRole('list', { name: 'Files to send' });
const attachedNames = () =>
  [...(attachments()?.querySelectorAll('.name') ?? [])].map((n) => n.textContent?.trim() ?? '');
const sendButton = () => screen.getByRole('button', { name: 'Send' });
const alerts = () => [...document.querySelectorAll('.composer [role="alert"]')].map((a) => a.textContent?.trim() ?? '');

describe('drag and drop onto the window', () => {
  beforeEach(() => setLocale('en'));
  afterEach(() => setLocale('en'));

  it('shows the drop overlay while files are dragged over the window, and hides it when they leave', async () => {
    const r = await renderWithDrops({});
    expect(overlay()).toBeNull();
    r.drag.enter(['/home/u/a.txt']);
    await waitFor(() => expect(overlay()).not.toBeNull());
    expect(overlay()?.textContent).toContain('Drop files to send');
    r.drag.over();
    await Promise.resolve();
    expect(overlay()).not.toBeNull();
    r.drag.leave();
    await waitFor(() => expect(overlay()).toBeNull());
    // cancelled: nothing was asked about, nothing attached
    expect(r.fileInfoCalls).toEqual([]);
    expect(attachments()).toBeNull();
  });

  it('the overlay goes at the drop, and one dropped file is attached, then sent as a file', async () => {
    const r = await renderWithDrops({ '/home/u/notes.txt': file('/home/u/notes.txt', 120, 'text/plain') });
    r.drag.enter(['/home/u/notes.txt']);
    await waitFor(() => expect(overlay()).not.toBeNull());
    r.drag.drop(['/home/u/notes.txt']);
    await waitFor(() => expect(overlay()).toBeNull());
    await waitFor(() => expect(attachedNames()).toEqual(['notes.txt']));
    expect(r.commands('file')).toEqual([]); // attached, not sent by the drop itself
    await fireEvent.click(sendButton());
    await waitFor(() => expect(r.commands('file')).toHaveLength(1));
    expect(r.commands('file')[0]).toMatchObject({ cmd: 'file', path: '/home/u/notes.txt' });
    await waitFor(() => expect(attachments()).toBeNull());
  });

  it('several files dropped at once are all attached, in order, and all sent', async () => {
    const paths = ['/home/u/a.png', '/home/u/b c.pdf', '/home/u/c.txt'];
    const r = await renderWithDrops({
      [paths[0]]: file(paths[0], 2048, 'image/png'),
      [paths[1]]: file(paths[1], 4096, 'application/pdf'),
      [paths[2]]: file(paths[2], 10, 'text/plain'),
    });
    r.dropFiles(paths);
    await waitFor(() => expect(attachedNames()).toEqual(['a.png', 'b c.pdf', 'c.txt']));
    expect(r.fileInfoCalls.sort()).toEqual([...paths].sort());
    expect(sendButton()).toBeEnabled();
    await fireEvent.click(sendButton());
    await waitFor(() => expect(r.commands('file')).toHaveLength(3));
    expect(r.commands('file').map((c) => c.path)).toEqual(paths);
  });

  it('the same file dropped twice is attached once', async () => {
    const r = await renderWithDrops({ '/home/u/a.txt': file('/home/u/a.txt', 5, 'text/plain') });
    r.dropFiles(['/home/u/a.txt']);
    await waitFor(() => expect(attachedNames()).toEqual(['a.txt']));
    r.dropFiles(['/home/u/a.txt', '/home/u/a.txt']);
    await new Promise((res) => setTimeout(res, 50));
    expect(attachedNames()).toEqual(['a.txt']);
  });

  it('a folder is refused with a sentence naming it; the files dropped with it are attached', async () => {
    const r = await renderWithDrops({
      '/home/u/Photos': FOLDER,
      '/home/u/a.txt': file('/home/u/a.txt', 5, 'text/plain'),
    });
    r.dropFiles(['/home/u/Photos', '/home/u/a.txt']);
    await waitFor(() => expect(attachedNames()).toEqual(['a.txt']));
    expect(alerts()).toEqual(['“Photos” is a folder. Only files can be sent — open it and drop the files inside.']);
    await fireEvent.click(sendButton());
    await waitFor(() => expect(r.commands('file')).toHaveLength(1));
    expect(r.commands('file')[0].path).toBe('/home/u/a.txt');
    await waitFor(() => expect(alerts()).toEqual([]));
  });

  it('a folder alone: refused, nothing attached, nothing to send', async () => {
    const r = await renderWithDrops({ '/home/u/Photos/': FOLDER });
    r.dropFiles(['/home/u/Photos/']);
    await waitFor(() => expect(alerts()).toHaveLength(1));
    expect(alerts()[0]).toContain('“Photos” is a folder');
    expect(attachments()).toBeNull();
    expect(sendButton()).toBeDisabled();
    expect(r.commands('file')).toEqual([]);
    // read, it can be put away
    await fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(alerts()).toEqual([]));
  });

  it('the refusal is in the chosen language (Russian, Chinese), never the shell’s English', async () => {
    const r = await renderWithDrops({ '/home/u/Фото': FOLDER });
    setLocale('ru');
    r.dropFiles(['/home/u/Фото']);
    await waitFor(() => expect(alerts()).toEqual(['«Фото» — это папка. Отправлять можно только файлы: откройте её и перетащите файлы из неё.']));
    setLocale('zh');
    r.dropFiles(['/home/u/Фото']);
    await waitFor(() => expect(alerts()[0]).toContain('“Фото”是一个文件夹'));
    expect(alerts().join(' ')).not.toContain('only files can be sent');
  });

  it('a missing or unreadable file is refused by name; other errors name the file and say why in the app’s words', async () => {
    const r = await renderWithDrops({
      '/home/u/secret.txt': { code: 'permission_denied', message: 'Permission denied (os error 13)' },
      '/home/u/odd': { code: 'invalid_input', message: 'this is not a file' },
    });
    r.dropFiles(['/home/u/gone.txt', '/home/u/secret.txt', '/home/u/odd']);
    await waitFor(() => expect(alerts()).toHaveLength(3));
    expect(alerts()).toEqual([
      '“gone.txt” was not found; it may have been moved or deleted.',
      '“secret.txt” cannot be read: no permission.',
      '“odd” could not be attached: Something entered is not valid. Check it and try again.',
    ]);
    expect(alerts().join(' ')).not.toMatch(/os error|this is not a file/);
    expect(attachments()).toBeNull();
  });

  it('a file over the agent’s limit is explained before anything is sent; an image is offered a downscale', async () => {
    const r = await renderWithDrops(
      {
        '/home/u/photo.png': file('/home/u/photo.png', 5000, 'image/png'),
        '/home/u/report.pdf': file('/home/u/report.pdf', 3000, 'application/pdf'),
      },
      { max_media_bytes: 1000 },
    );
    r.dropFiles(['/home/u/photo.png', '/home/u/report.pdf']);
    await waitFor(() => expect(attachedNames()).toEqual(['photo.png', 'report.pdf']));
    const list = attachments()!;
    const [photo, report] = within(list).getAllByRole('listitem');
    expect(photo).toHaveTextContent('This file is 4.9 KB; the agent accepts files up to 1000 B.');
    expect(report).toHaveTextContent('This file is 2.9 KB; the agent accepts files up to 1000 B.');
    // nothing goes out while a file is over the limit
    expect(sendButton()).toBeDisabled();
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    expect(r.commands('file')).toEqual([]);
    // a downscale for the image, not for the PDF
    expect(within(photo).getByRole('button', { name: 'Downscale image' })).toBeInTheDocument();
    expect(within(report).queryByRole('button', { name: 'Downscale image' })).toBeNull();

    await fireEvent.click(within(photo).getByRole('button', { name: 'Downscale image' }));
    await waitFor(() => expect(attachedNames()).toEqual(['photo-small.png', 'report.pdf']));
    expect(r.downscaled).toEqual([{ path: '/home/u/photo.png', maxBytes: 1000 }]);
    expect(sendButton()).toBeDisabled(); // the PDF is still over
    await fireEvent.click(screen.getByRole('button', { name: 'Remove report.pdf' }));
    await waitFor(() => expect(sendButton()).toBeEnabled());
    await fireEvent.click(sendButton());
    await waitFor(() => expect(r.commands('file')).toHaveLength(1));
    expect(r.commands('file')[0].path).toBe('/home/u/photo-small.png');
  });

  it('with no limit announced, a drop is held to the default 8 MiB', async () => {
    const r = await renderWithDrops({ '/home/u/big.bin': file('/home/u/big.bin', 9 * 1024 * 1024, 'application/octet-stream') });
    r.dropFiles(['/home/u/big.bin']);
    await waitFor(() => expect(attachedNames()).toEqual(['big.bin']));
    expect(attachments()).toHaveTextContent('This file is 9.0 MB; the agent accepts files up to 8.0 MB.');
    expect(sendButton()).toBeDisabled();
  });
});

describe('pasting an image', () => {
  it('an image pasted from the clipboard becomes an attachment (written to a temporary file first)', async () => {
    const r = await renderWithDrops({});
    const png = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4])], 'image.png', { type: 'image/png' });
    await fireEvent.paste(composer(), { clipboardData: { files: [png], items: [], types: ['Files'] } });
    await waitFor(() => expect(attachments()).not.toBeNull());
    expect(r.written).toHaveLength(1);
    expect(r.written[0].filename).toMatch(/^pasted-.*\.png$/);
    expect(atob(r.written[0].base64)).toBe(String.fromCharCode(0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4));
    expect(attachedNames()[0]).toBe(r.written[0].filename);
  });

  it('pasted text stays text: the shell is not asked for an image', async () => {
    const r = await renderWithDrops({}, {}, { size: 300 });
    await fireEvent.paste(composer(), { clipboardData: { files: [], items: [], types: ['text/plain'] } });
    await new Promise((res) => setTimeout(res, 30));
    expect(r.written).toEqual([]);
    expect(r.clipboardAsked).toEqual([]);
    expect(attachments()).toBeNull();
  });

  it('a paste event with nothing in it (WebKitGTK, an image on the clipboard): the shell reads the clipboard', async () => {
    const r = await renderWithDrops({}, {}, { size: 300 });
    await fireEvent.paste(composer(), { clipboardData: { files: [], items: [], types: [] } });
    await waitFor(() => expect(attachedNames()).toHaveLength(1));
    expect(r.clipboardAsked).toHaveLength(1);
    expect(r.clipboardAsked[0]).toMatch(/^pasted-.*\.png$/);
    expect(attachedNames()[0]).toBe(r.clipboardAsked[0]);
    expect(r.written).toEqual([]);
    await fireEvent.click(sendButton());
    await waitFor(() => expect(r.commands('file')).toHaveLength(1));
    expect(r.commands('file')[0].path).toBe(`/tmp/hermes/${r.clipboardAsked[0]}`);
  });

  it('nothing on the clipboard at all: nothing attached, nothing said', async () => {
    const r = await renderWithDrops({});
    await fireEvent.paste(composer(), { clipboardData: { files: [], items: [], types: [] } });
    await waitFor(() => expect(r.clipboardAsked).toHaveLength(1));
    await new Promise((res) => setTimeout(res, 30));
    expect(attachments()).toBeNull();
    expect(alerts()).toEqual([]);
  });
});

describe('stagePaths', () => {
  it('asks about every path, keeps the order of the files, and names every refusal', async () => {
    const info = async (p: string): Promise<FileInfo> => {
      if (p.endsWith('/')) throw FOLDER;
      return file(p, 1);
    };
    const s = await stagePaths(['/a/x.txt', '/a/dir/', '/a/y.txt', '/a/x.txt'], info, ['/a/y.txt']);
    expect(s.files.map((f) => f.path)).toEqual(['/a/x.txt']);
    expect(s.refused).toEqual(['“dir” is a folder. Only files can be sent — open it and drop the files inside.']);
  });

  it('baseName works with either separator', () => {
    expect(baseName('/home/u/Photos/')).toBe('Photos');
    expect(baseName('C:\\Users\\u\\Photos')).toBe('Photos');
    expect(baseName('a.txt')).toBe('a.txt');
  });
});
