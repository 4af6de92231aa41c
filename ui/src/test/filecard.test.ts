import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { ready, renderApp } from './helpers';
import { extensionOf, middleCut, nameFlags } from '../lib/util/filename';

const exeAsPdf = { viewable: false, realMime: 'application/pdf', realExt: 'pdf', nameExt: 'exe' };

describe('a received file never runs with one click (A-20)', () => {
  it('a program named report.pdf.exe and labelled application/pdf: no Open, a warning naming its real type, Save as and Show in folder stay', async () => {
    const ipc = await renderApp({ handlers: { file_type: () => exeAsPdf } });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'x', kind: 'document', mime: 'application/pdf', filename: 'Q3-report-final-for-review.pdf.exe', path: '/dl/Q3-report-final-for-review.pdf.exe', size: 4096 });
    const note = await screen.findByText(/Not opened from the app: this is a PDF \(application\/pdf\) file named “\.exe”/);
    const msg = note.closest('.attachment') as HTMLElement;
    expect(within(msg).getByText(/ends in “\.exe”, not “\.pdf”/)).toBeInTheDocument();
    expect(within(msg).queryByRole('button', { name: 'Open' })).toBeNull();
    expect(msg.querySelector('.file-size')?.textContent).toBe('4.0 KB');
    await fireEvent.click(await within(msg).findByRole('button', { name: 'Save as…' }));
    await fireEvent.click(within(msg).getByRole('button', { name: 'Show in folder' }));
    const cmds = ipc.calls.map((c) => c.cmd);
    expect(cmds).toContain('save_file_as');
    expect(cmds).toContain('reveal_file');
    expect(cmds).not.toContain('open_file');
    expect(ipc.calls.find((c) => c.cmd === 'file_type')?.args).toEqual({ token: '/dl/Q3-report-final-for-review.pdf.exe' });
  });

  it('Open is offered only after the shell says the file is viewable, whatever the agent labelled it', async () => {
    let answer: (v: unknown) => void = () => {};
    const pending = new Promise((r) => (answer = r));
    const ipc = await renderApp({ handlers: { file_type: () => pending } });
    await ready(ipc);
    ipc.emit({ event: 'media', id: 'p', kind: 'document', mime: 'application/pdf', filename: 'report.pdf', path: '/dl/report.pdf', size: 4096 });
    const name = await screen.findByText('report.pdf');
    const card = name.closest('.file') as HTMLElement;
    expect(within(card).queryByRole('button', { name: 'Open' })).toBeNull();
    answer({ viewable: true, realMime: 'application/pdf', realExt: 'pdf', nameExt: 'pdf' });
    await fireEvent.click(await within(card).findByRole('button', { name: 'Open' }));
    expect(ipc.calls.map((c) => [c.cmd, c.args.token])).toContainEqual(['open_file', '/dl/report.pdf']);
    expect(document.querySelector('[data-message-id="p"] .warn')).toBeNull();
  });

  it('a long name is cut in the middle and keeps its extension; the full name is its title', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    const long = 'Quarterly-financial-report-for-the-board-final-for-review-v7.pdf';
    ipc.emit({ event: 'media', id: 'l', kind: 'document', mime: 'application/pdf', filename: long, path: `/dl/${long}`, size: 10 });
    const shown = await screen.findByTitle(long);
    expect(shown.textContent).toContain('…');
    expect(shown.textContent?.endsWith('-v7.pdf')).toBe(true);
    expect(shown.textContent?.startsWith('Quarterly-')).toBe(true);
  });

  it('a name that hides its extension behind spaces is flagged', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    const name = `invoice.pdf${' '.repeat(40)}.scr`;
    ipc.emit({ event: 'media', id: 'h', kind: 'document', mime: 'application/pdf', filename: name, path: '/dl/invoice.scr', size: 10 });
    const msg = await waitFor(() => {
      const m = document.querySelector('[data-message-id="h"]') as HTMLElement | null;
      if (!m) throw new Error('not yet');
      return m;
    });
    expect(await within(msg).findByText(/hides part of itself/)).toBeInTheDocument();
    expect(within(msg).queryByRole('button', { name: 'Open' })).toBeNull();
  });
});

describe('file names', () => {
  it('middleCut keeps the start and the whole extension', () => {
    expect(middleCut('short.pdf')).toBe('short.pdf');
    const cut = middleCut('Q3-report-final-for-review-and-signature-by-friday.pdf.exe', 30);
    expect(Array.from(cut).length).toBe(30);
    expect(cut.startsWith('Q3-report')).toBe(true);
    expect(cut.endsWith('.pdf.exe')).toBe(true);
    expect(cut).toContain('…');
    expect(Array.from(middleCut('😀'.repeat(50), 20)).length).toBe(20);
  });

  it('flags double extensions and hidden ones, not compound types', () => {
    expect(nameFlags('report.pdf.exe').doubleExt).toEqual({ inner: 'pdf', outer: 'exe' });
    expect(nameFlags('photo.JPG.scr').doubleExt).toEqual({ inner: 'jpg', outer: 'scr' });
    expect(nameFlags('backup.tar.gz').doubleExt).toBeNull();
    expect(nameFlags('v1.2.3.txt').doubleExt).toBeNull();
    expect(nameFlags('report.pdf').doubleExt).toBeNull();
    expect(nameFlags('invoice\u202Efdp.exe').hiddenExt).toBe(true);
    expect(nameFlags('rep\u200Bort.pdf').hiddenExt).toBe(true);
    expect(nameFlags('a.pdf     .exe').hiddenExt).toBe(true);
    expect(nameFlags('a\u3000\u3000\u3000.exe').hiddenExt).toBe(true);
    expect(nameFlags('my report.pdf').hiddenExt).toBe(false);
    expect(extensionOf('x.PDF')).toBe('pdf');
    expect(extensionOf('.bashrc')).toBe('');
  });
});
