import { describe, expect, it, beforeEach } from 'vitest';
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import QuickApp from '../QuickApp.svelte';
import { TauriBackend } from '../lib/backend/tauri';
import { AppState, loadQuickPrefs } from '../lib/state/app.svelte';
import { CONV, PROFILE, ready, renderApp, setupIpc } from './helpers';
import { shortcutOf } from '../lib/util/shortcut';
import type { Conversation, Profile } from '../lib/backend/types';

const V3: Profile = { ...PROFILE, id: 'p2', name: 'Gateway', dialect: 'v3', url: 'wss://gw.example.com/ws' };
const V3_CONV: Conversation = { ...CONV, id: 'c2', profileId: 'p2', title: 'Trip plans', session: 's-2' };

async function renderQuick(opts: Parameters<typeof setupIpc>[0] = {}) {
  const ipc = setupIpc({ profiles: [PROFILE, V3], conversations: [CONV, V3_CONV], ...opts });
  const backend = new TauriBackend();
  const app = new AppState(backend, 'quick');
  const r = render(QuickApp, { props: { backend, app } });
  await app.start();
  return { ...ipc, app, backend, ...r };
}

describe('the Quick Ask panel', () => {
  beforeEach(() => localStorage.clear());

  it('talks to the agent it talked to last, and remembers a new pick', async () => {
    localStorage.setItem('hermes.quick.v1', JSON.stringify({ profileId: 'p2', fresh: false }));
    const q = await renderQuick();
    const picker = (await screen.findByTestId('quick-agent')) as HTMLSelectElement;
    await waitFor(() => expect(picker.value).toBe('p2'));
    expect(q.app.selection).toEqual({ profileId: 'p2', conversationId: 'c2' });
    // built for a press, the panel goes on screen once it has rendered: said to the shell once
    await waitFor(() => expect(q.calls.filter((c) => c.cmd === 'quick_page_ready')).toHaveLength(1));
    await fireEvent.change(picker, { target: { value: 'p1' } });
    await waitFor(() => expect(q.app.selection?.profileId).toBe('p1'));
    expect(loadQuickPrefs().profileId).toBe('p1');
    // only the picked agent is subscribed to: the panel does not connect every agent as the main window does
    expect(q.calls.filter((c) => c.cmd === 'connect').map((c) => c.args.profileId)).toEqual(['p2', 'p1']);
    expect(q.calls.filter((c) => c.cmd === 'quick_page_ready')).toHaveLength(1);
  });

  it('offers "new conversation each time" only for an agent with many conversations (v3)', async () => {
    await renderQuick();
    const fresh = (await screen.findByTestId('quick-fresh')) as HTMLInputElement;
    await waitFor(() => expect(fresh.disabled).toBe(true)); // the adapter agent (first) keeps one conversation
    expect(fresh.closest('label')?.title).toBe('This agent keeps one conversation.');
  });

  it('Esc hides the panel, and "Open in Hermes" hands the conversation to the main window', async () => {
    const q = await renderQuick();
    await ready(q);
    await waitFor(() => expect(q.app.selection).not.toBeNull());
    await fireEvent.click(screen.getByTestId('quick-open-main'));
    await waitFor(() => expect(q.shell.quickCalls.map((c) => c.cmd)).toEqual(['quick_open_in_main']));
    expect(q.shell.quickCalls[0].args).toEqual({ profileId: 'p1', conversationId: 'c1' });
    await fireEvent.keyDown(window, { key: 'Escape' });
    await waitFor(() => expect(q.shell.quickCalls.map((c) => c.cmd)).toEqual(['quick_open_in_main', 'quick_hide']));
  });

  it('"Ask about the clipboard" quotes its text above the question, attaches its picture, and says when it is empty', async () => {
    const q = await renderQuick();
    await ready(q);
    await waitFor(() => expect(q.app.selection).not.toBeNull());
    const input = (await screen.findByLabelText('Message')) as HTMLTextAreaElement;
    const button = screen.getByTestId('quick-clipboard');
    expect(button.getAttribute('aria-label')).toBe('Ask about the clipboard: its picture or text goes into the message');

    // nothing is read until the click
    expect(q.calls.some((c) => c.cmd === 'clipboard_offer')).toBe(false);
    q.shell.clipboard = null;
    await fireEvent.click(button);
    expect(await screen.findByTestId('quick-notice')).toHaveTextContent('The clipboard is empty.');

    await fireEvent.input(input, { target: { value: 'What does this mean?' } });
    q.shell.clipboard = { text: 'line one\r\n\r\nline two' };
    await fireEvent.click(button);
    await waitFor(() => expect(input.value).toBe('> line one\n>\n> line two\n\nWhat does this mean?'));
    expect(screen.queryByTestId('quick-notice')).toBeNull();
    await fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(q.commands('text')).toHaveLength(1));
    expect(q.commands('text')[0].text).toBe('> line one\n>\n> line two\n\nWhat does this mean?');

    q.shell.clipboard = { image: 2048 };
    await fireEvent.click(button);
    const files = await screen.findByRole('list', { name: 'Files to send' });
    expect(files).toHaveTextContent(/clipboard-.*\.png/);
    expect(files).toHaveTextContent('2.0 KB');
    const stamp = q.calls.filter((c) => c.cmd === 'clipboard_offer').map((c) => String(c.args.stamp));
    expect(stamp).toHaveLength(3);
    expect(stamp[2]).toMatch(/^\d{4}-\d\d-\d\dT[\d-]+Z$/);
  });

  it('Esc while composing text (an input method) does not hide the panel', async () => {
    const q = await renderQuick();
    await waitFor(() => expect(q.app.selection).not.toBeNull());
    await fireEvent.keyDown(window, { key: 'Escape', isComposing: true });
    expect(q.shell.quickCalls).toEqual([]);
  });
});

describe('Settings → Shortcuts: the Quick Ask shortcut', () => {
  it('is recorded from the keys pressed and saved', async () => {
    const ipc = await renderApp();
    ipc.app.openSettings('shortcuts');
    const field = (await screen.findByTestId('quick-ask-shortcut')) as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe('Control+Alt+Space'));
    await fireEvent.click(screen.getByTestId('quick-ask-record'));
    await fireEvent.keyDown(field, { key: 'Control', code: 'ControlLeft', ctrlKey: true });
    await fireEvent.keyDown(field, { key: 'k', code: 'KeyK', ctrlKey: true, shiftKey: true });
    await waitFor(() => expect(ipc.shell.settings.quickAskShortcut).toBe('Control+Shift+KeyK'));
    expect(field.value).toBe('Control+Shift+KeyK');
    expect(await screen.findByText('Saved')).toBeInTheDocument();
  });

  it('refuses the push-to-talk keys with a message and keeps the old shortcut', async () => {
    const ipc = await renderApp();
    ipc.app.openSettings('shortcuts');
    const field = (await screen.findByTestId('quick-ask-shortcut')) as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe('Control+Alt+Space'));
    await fireEvent.input(field, { target: { value: 'Ctrl+Shift+Space' } });
    await fireEvent.change(field);
    expect(await screen.findByTestId('quick-ask-error')).toHaveTextContent('This is already the push-to-talk shortcut.');
    expect(ipc.shell.settings.quickAskShortcut).toBe('Control+Alt+Space');
  });
});

describe('shortcutOf', () => {
  const key = (code: string, mods: Partial<Record<'ctrlKey' | 'altKey' | 'shiftKey' | 'metaKey', boolean>> = {}) =>
    shortcutOf({ code, ctrlKey: false, altKey: false, shiftKey: false, metaKey: false, ...mods });
  it('names the modifiers in a fixed order, then the physical key', () => {
    expect(key('Space', { altKey: true, ctrlKey: true })).toBe('Control+Alt+Space');
    expect(key('KeyA', { metaKey: true, shiftKey: true })).toBe('Shift+Super+KeyA');
    expect(key('F9')).toBe('F9');
  });
  it('waits while only modifiers are down, and refuses a plain key', () => {
    expect(key('ControlLeft', { ctrlKey: true })).toBeNull();
    expect(key('AltRight', { altKey: true })).toBeNull();
    expect(key('KeyA')).toBeNull();
    expect(key('Tab', { ctrlKey: true })).toBeNull();
  });
});
