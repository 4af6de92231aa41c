import { describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { CONV, PROFILE, chatLog, composer, frame, ready, renderApp } from './helpers';

describe('sending text', () => {
  it('shows a local echo at once, then sent, then delivered', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    const box = composer();
    await fireEvent.input(box, { target: { value: 'Hello agent' } });
    await fireEvent.keyDown(box, { key: 'Enter' });

    const bubble = (await chatLog().findByText('Hello agent')).closest('[data-message-id]') as HTMLElement;
    expect(bubble).toBeTruthy();
    expect(within(bubble).getByLabelText('Waiting to send')).toBeInTheDocument();
    const [cmd] = ipc.commands('text');
    expect(cmd).toMatchObject({ cmd: 'text', text: 'Hello agent' });
    expect(cmd.session).toBeUndefined(); // adapter dialect: no session
    const id = cmd.id as string;
    expect(bubble.dataset.messageId).toBe(id);
    expect(box.value).toBe('');

    ipc.emit({ event: 'sent', id });
    await waitFor(() => expect(within(bubble).getByLabelText('Sent')).toBeInTheDocument());
    ipc.emit({ event: 'delivered', id });
    await waitFor(() => expect(within(bubble).getByLabelText('Delivered')).toBeInTheDocument());
    // A late "sent" never moves it backwards.
    ipc.emit({ event: 'sent', id });
    await frame();
    expect(within(bubble).getByLabelText('Delivered')).toBeInTheDocument();
  });

  it('Shift+Enter does not send', async () => {
    const ipc = await renderApp();
    const box = composer();
    await fireEvent.input(box, { target: { value: 'line one' } });
    await fireEvent.keyDown(box, { key: 'Enter', shiftKey: true });
    expect(ipc.commands('text')).toHaveLength(0);
  });

  it('a failed send shows the reason (a sentence, not the shell’s text) and Retry resends with the same id', async () => {
    let fail = true;
    const ipc = await renderApp({
      handlers: {
        send_command: (args) => {
          const c = args.command as { cmd: string; id?: string };
          if (c.cmd === 'text' && fail) throw { code: 'offline', message: 'The engine is not running' };
          return { id: c.id };
        },
      },
    });
    const box = composer();
    await fireEvent.input(box, { target: { value: 'please work' } });
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect(await screen.findByText('The agent is not online.')).toBeInTheDocument();
    expect(screen.queryByText('The engine is not running')).toBeNull();
    const firstId = ipc.commands('text')[0].id;
    fail = false;
    await fireEvent.click(await screen.findByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(ipc.commands('text')).toHaveLength(2));
    expect(ipc.commands('text')[1].id).toBe(firstId);
    await waitFor(() => expect(screen.queryByText('The agent is not online.')).not.toBeInTheDocument());
  });

  it('an agent error with an id marks that message failed (G-7)', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    await fireEvent.input(composer(), { target: { value: 'spam' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    const id = ipc.commands('text')[0].id as string;
    ipc.emit({ event: 'error', code: 'rate_limited', text: 'Slow down', id });
    expect(await screen.findByText('Too many messages — wait a moment and retry.')).toBeInTheDocument();
    expect(screen.getByText('Slow down')).toBeInTheDocument();
    expect(await screen.findByRole('button', { name: 'Retry' })).toBeInTheDocument();
  });

  it('reply-to quotes the message above the composer and sends reply_to', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: 'Which server?', final: true });
    await chatLog().findByText('Which server?');
    await fireEvent.click(await screen.findByRole('button', { name: 'Reply' }));
    expect(screen.getByText('Replying to Atlas')).toBeInTheDocument();
    await fireEvent.input(composer(), { target: { value: 'web-3' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    expect(ipc.commands('text')[0]).toMatchObject({ text: 'web-3', reply_to: 'r1' });
    expect(screen.queryByText('Replying to Atlas')).not.toBeInTheDocument();
    // The bubble shows the quote.
    const bubble = chatLog().getByText('web-3').closest('[data-message-id]') as HTMLElement;
    expect(within(bubble).getByText('Which server?')).toBeInTheDocument();
  });

  it("clicking a reply's quote shows the quoted message (scrolled to and flashed)", async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: 'Which server?', final: true });
    ipc.emit({ event: 'message', id: 'r2', text: 'web-3, the one in the rack', final: true, reply_to: 'r1' });
    await waitFor(() => expect(document.querySelector('[data-message-id="r2"]')).not.toBeNull());
    const reply = document.querySelector('[data-message-id="r2"]') as HTMLElement;
    const quote = within(reply).getByTitle('Show the quoted message');
    expect(quote.tagName).toBe('BUTTON');
    expect(quote).toHaveTextContent('Which server?');
    const quoted = () => document.querySelector('[data-message-id="r1"]') as HTMLElement;
    expect(quoted()).not.toHaveClass('highlighted');
    await fireEvent.click(quote);
    await waitFor(() => expect(quoted()).toHaveClass('highlighted'));
  });

  it('announces a streamed reply once, when final', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    const live = document.querySelector('[aria-live="polite"][aria-atomic="true"]') as HTMLElement;
    ipc.emit({ event: 'message', id: 'r1', text: 'Par', final: false });
    ipc.emit({ event: 'message', id: 'r1', text: 'Partial answ', final: false });
    await frame();
    await frame();
    expect(live.textContent).toBe('');
    ipc.emit({ event: 'message', id: 'r1', text: 'Partial answer.', final: true });
    await waitFor(() => expect(live.textContent).toBe('Partial answer.'));
  });

  it('shows and hides the typing indicator', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'typing', on: true });
    expect(await screen.findByText('Atlas is typing…')).toBeInTheDocument();
    ipc.emit({ event: 'typing', on: false });
    await waitFor(() => expect(screen.queryByText('Atlas is typing…')).not.toBeInTheDocument());
  });
});

describe('a new v3 agent', () => {
  it('shows the conversation that connecting created, not "Loading…" forever', async () => {
    const v3 = { ...PROFILE, dialect: 'v3' as const };
    let listed = 0;
    const ipc = await renderApp({
      profiles: [v3],
      // none before the first connect (the shell creates it on connect), one after
      handlers: { list_conversations: () => (listed++ === 0 ? [] : [{ ...CONV, profileId: v3.id }]) },
    });
    expect(ipc.calls.findIndex((c) => c.cmd === 'connect')).toBeGreaterThan(0);
    await waitFor(() => expect(document.getElementById('composer-input')).not.toBeNull());
  });
});
