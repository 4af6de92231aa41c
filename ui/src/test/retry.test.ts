// An agent's error stays on its message, and Retry follows the engine's rule: a message the agent never received
// goes again under its own id; one it received and refused (`id_in_use`) goes as a new message, shown as the retry of
// the failed one.
import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import type { StoredMessage } from '../lib/backend/types';
import { composer, ready, renderApp, storedMessage } from './helpers';

const row = (id: string) => document.querySelector(`[data-message-id="${id}"]`) as HTMLElement;
/** The line under a message (its error, Retry). */
const line = (id: string) => row(id).nextElementSibling as HTMLElement | null;
/** The buttons' texts in an element (however the list shows it while it measures its rows). */
const buttons = (el: HTMLElement | null) => [...(el?.querySelectorAll('button') ?? [])].map((b) => b.textContent?.trim());

async function send(text: string) {
  await fireEvent.input(composer(), { target: { value: text } });
  await fireEvent.keyDown(composer(), { key: 'Enter' });
}

/** The shell: `send_command` refuses an id the agent already has, as the engine does. */
function engineLike(received: Set<string>) {
  return {
    send_command: (args: Record<string, unknown>) => {
      const c = args.command as { cmd: string; id?: string };
      if (c.id && received.has(c.id)) throw { code: 'id_in_use', message: `the id "${c.id}" is already used by another message` };
      if (c.id) received.add(c.id);
      return { id: c.id };
    },
  };
}

describe('an error for a message wins over its later delivery', () => {
  it('error{id} then the Pong’s delivered: the bubble stays failed with the error (A-6)', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('/error');
    const id = ipc.commands('text')[0].id as string;
    ipc.emit({ event: 'sent', id });
    ipc.emit({ event: 'error', code: 'internal', text: 'A demo error: something went wrong on the agent side.', id });
    ipc.emit({ event: 'delivered', id });
    ipc.emit({ event: 'sent', id });
    await waitFor(() => expect(within(row(id)).getByLabelText('Not sent')).toBeInTheDocument());
    expect(row(id).querySelector('.bubble.failed')).not.toBeNull();
    expect(within(row(id)).queryByLabelText('Delivered')).toBeNull();
    const under = line(id)!;
    expect(within(under).getByText('Something went wrong on the agent.')).toBeInTheDocument();
    // the agent's own words are shown beside the sentence
    expect(within(under).getByText('A demo error: something went wrong on the agent side.')).toBeInTheDocument();
    expect(buttons(under)).toEqual(['Retry']);
  });

  it('a refusal (rejected{id}) also stays: later states do not undo it', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('big one');
    const id = ipc.commands('text')[0].id as string;
    ipc.emit({ event: 'rejected', cmd: 'text', code: 'too_long', reason: 'the message is too long (9000 bytes encoded; at most 8192)', id });
    ipc.emit({ event: 'delivered', id });
    await waitFor(() => expect(within(line(id)!).getByText(/too long for the agent/)).toBeInTheDocument());
    expect(within(row(id)).getByLabelText('Not sent')).toBeInTheDocument();
    // our own English detail is not shown, only the sentence
    expect(screen.queryByText(/9000 bytes encoded/)).toBeNull();
  });

  it('a v3 upload the engine tries again by itself stays queued, and its delivery then counts', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await send('text stands in for a file here');
    const id = ipc.commands('text')[0].id as string;
    ipc.emit({ event: 'error', code: 'upload_failed', text: 'upload failed, will retry in 1.0 s: network error', id });
    await waitFor(() => expect(within(line(id)!).getByText('The upload failed.')).toBeInTheDocument());
    expect(within(row(id)).getByLabelText('Waiting to send')).toBeInTheDocument();
    expect(buttons(line(id))).toEqual([]);
    ipc.emit({ event: 'sent', id });
    ipc.emit({ event: 'delivered', id });
    await waitFor(() => expect(within(row(id)).getByLabelText('Delivered')).toBeInTheDocument());
    expect(screen.queryByText('The upload failed.')).toBeNull();
  });
});

describe('Retry', () => {
  it('a message the agent never received goes again under its own id, and then shows delivered', async () => {
    // (the engine accepts the same id again: its outbox entry failed before the agent had it)
    const ipc = await renderApp();
    await ready(ipc);
    await send('hello');
    const id = ipc.commands('text')[0].id as string;
    // refused locally before anything went out (the engine's outbox entry is failed): not received by the agent
    ipc.emit({ event: 'rejected', cmd: 'text', code: 'not_sent', reason: 'not sent: …', id });
    const retry = await within(await waitFor(() => line(id)!)).findByRole('button', { name: 'Retry' });
    await fireEvent.click(retry);
    await waitFor(() => expect(ipc.commands('text')).toHaveLength(2));
    expect(ipc.commands('text')[1]).toMatchObject({ id, text: 'hello' });
    expect(ipc.commands('text')[1].retry_of).toBeUndefined();
    ipc.emit({ event: 'sent', id });
    ipc.emit({ event: 'delivered', id });
    await waitFor(() => expect(within(row(id)).getByLabelText('Delivered')).toBeInTheDocument());
    expect(line(id)?.classList.contains('error-line') ?? false).toBe(false);
    expect(document.querySelectorAll('[data-message-id]')).toHaveLength(1);
  });

  it('a message the agent received and refused (id_in_use) goes as a new message marked as its retry', async () => {
    const ipc = await renderApp({ handlers: engineLike(new Set()) });
    await ready(ipc);
    await send('/error');
    const id = ipc.commands('text')[0].id as string;
    ipc.emit({ event: 'sent', id });
    ipc.emit({ event: 'error', code: 'internal', text: 'A demo error', id });
    ipc.emit({ event: 'delivered', id });
    await fireEvent.click(await within(await waitFor(() => line(id)!)).findByRole('button', { name: 'Retry' }));
    // the engine's refusal event comes too: it is Retry's business, not a notice
    ipc.emit({ event: 'rejected', cmd: 'text', code: 'id_in_use', reason: 'the id is already used', id: null });
    await waitFor(() => expect(ipc.commands('text')).toHaveLength(3));
    const [, same, again] = ipc.commands('text');
    expect(same).toMatchObject({ id, text: '/error' });
    expect(again).toMatchObject({ text: '/error', retry_of: id });
    expect(again.id).not.toBe(id);
    const newId = again.id as string;
    // the new bubble says it is the retry; the failed one keeps its error and says it was sent again
    await waitFor(() => expect(row(newId)).not.toBeNull());
    expect(within(row(newId)).getByText('Sent again')).toBeInTheDocument();
    expect(within(row(id)).getByLabelText('Not sent')).toBeInTheDocument();
    expect(within(line(id)!).getByText('Something went wrong on the agent.')).toBeInTheDocument();
    expect(within(line(id)!).getByText('Sent again below')).toBeInTheDocument();
    expect(buttons(line(id))).toEqual([]);
    expect(screen.queryByText(/already sent once/)).toBeNull();
    ipc.emit({ event: 'sent', id: newId });
    ipc.emit({ event: 'delivered', id: newId });
    await waitFor(() => expect(within(row(newId)).getByLabelText('Delivered')).toBeInTheDocument());
    // (it is the order on screen too: the retry below the failed one)
    const ids = [...document.querySelectorAll('[data-message-id]')].map((e) => e.getAttribute('data-message-id'));
    expect(ids).toEqual([id, newId]);
  });

  it('a file retried as a new message keeps its file, caption and the retry mark', async () => {
    const ipc = await renderApp({
      handlers: { ...engineLike(new Set()), file_info: () => ({ path: '/home/u/r.pdf', name: 'r.pdf', size: 1000, mime: 'application/pdf' }) },
    });
    await ready(ipc);
    const s = ipc.app.currentSession!;
    const item = await s.sendFile('c1', { path: '/home/u/r.pdf', name: 'r.pdf', size: 1000, mime: 'application/pdf' }, 'the report');
    ipc.emit({ event: 'error', code: 'unsupported', text: 'no PDFs', id: item.id });
    await waitFor(() => expect(item.state).toBe('failed'));
    await s.retry('c1', item.id);
    const files = ipc.commands('file');
    expect(files).toHaveLength(3);
    expect(files[2]).toMatchObject({ path: '/home/u/r.pdf', caption: 'the report', retry_of: item.id });
    const again = s.retryOf('c1', item.id)!;
    expect(again.attachments[0]).toMatchObject({ path: '/home/u/r.pdf', mediaId: again.id });
    // a second Retry of the failed one does nothing: it was sent again already
    await s.retry('c1', item.id);
    expect(ipc.commands('file')).toHaveLength(3);
  });

  it('after a restart the history shows the failed message as retried and the new one as its retry', async () => {
    const failed: StoredMessage = {
      ...storedMessage('m1', 'up', '/error', '2024-06-01T10:00:00Z'),
      state: 'failed',
      error: { code: 'internal', text: 'A demo error' },
    };
    const retry: StoredMessage = { ...storedMessage('m2', 'up', '/error', '2024-06-01T10:00:05Z'), retryOf: 'm1' };
    await renderApp({ history: { messages: [failed, retry], cards: [] } });
    await waitFor(() => expect(row('m2')).not.toBeNull());
    expect(within(row('m2')).getByText('Sent again')).toBeInTheDocument();
    expect(within(row('m1')).getByLabelText('Not sent')).toBeInTheDocument();
    expect(within(line('m1')!).getByText('Something went wrong on the agent.')).toBeInTheDocument();
    expect(within(line('m1')!).getByText('Sent again below')).toBeInTheDocument();
    expect(buttons(line('m1'))).toEqual([]);
  });

  it('a failed message from the history still has its Retry when nothing sent it again', async () => {
    const failed: StoredMessage = {
      ...storedMessage('m1', 'up', 'hi', '2024-06-01T10:00:00Z'),
      state: 'failed',
      error: { code: 'not_sent', text: 'not sent: could not read /x' },
    };
    await renderApp({ history: { messages: [failed], cards: [] } });
    await waitFor(() => expect(line('m1')).not.toBeNull());
    expect(within(line('m1')!).getByText('The message could not be sent.')).toBeInTheDocument();
    expect(screen.queryByText(/could not read/)).toBeNull();
    expect(buttons(line('m1'))).toEqual(['Retry']);
  });
});
