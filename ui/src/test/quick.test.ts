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
    // with the page's timeline for the shell's log (the bench's breakdown of a press from the tray)
    expect(String(q.calls.find((c) => c.cmd === 'quick_page_ready')?.args.marks)).toMatch(
      /^origin=\d+ .*quick-rendered=\d+/,
    );
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
    const input = (await screen.findByLabelText(/^Message to /)) as HTMLTextAreaElement;
    const button = screen.getByTestId('quick-clipboard');
    expect(button).toHaveAccessibleName('Clipboard');
    expect(button.title).toBe('Ask about the clipboard: its picture or text goes into the message');

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

describe('Quick Ask: look at my screen', () => {
  beforeEach(() => {
    localStorage.clear();
    // jsdom has no PointerEvent: a mouse event with a pointer id, so that clientX/clientY and button come through
    if (!('PointerEvent' in window)) {
      class PointerEventLike extends MouseEvent {
        pointerId: number;
        constructor(type: string, init: PointerEventInit = {}) {
          super(type, init);
          this.pointerId = init.pointerId ?? 1;
        }
      }
      Object.assign(window, { PointerEvent: PointerEventLike });
    }
  });

  async function panel() {
    const q = await renderQuick();
    await ready(q);
    await waitFor(() => expect(q.app.selection).not.toBeNull());
    await screen.findByLabelText(/^Message to /);
    return q;
  }
  // (naming a window reads no pixels: not a capture)
  const captures = (q: { calls: { cmd: string }[] }) =>
    q.calls.filter((c) => c.cmd.startsWith('capture_') && c.cmd !== 'capture_access' && c.cmd !== 'capture_named_window');

  it('"Screen" captures on the click only, and attaches the picture downscaled to the agent\'s limit', async () => {
    const q = await panel();
    expect(captures(q)).toEqual([]);
    q.shell.captureBytes = 20 * 1024 * 1024; // over the agent's 8 MiB
    await fireEvent.click(screen.getByTestId('capture-screen'));
    const files = await screen.findByRole('list', { name: 'Files to send' });
    await waitFor(() => expect(files).toHaveTextContent(/screen-.*-small\.png/));
    expect(captures(q).map((c) => c.cmd)).toEqual(['capture_screen']);
    const down = q.calls.find((c) => c.cmd === 'downscale_image')!;
    expect(down.args.token).toMatch(/screen-.*\.png$/);
    expect(down.args.maxBytes).toBe(8 * 1024 * 1024);
    // sent to the agent picked in the panel, as a file
    await fireEvent.keyDown(screen.getByLabelText(/^Message to /), { key: 'Enter' });
    await waitFor(() => expect(q.commands('file')).toHaveLength(1));
  });

  it('"Window" lists the windows on screen and captures the one picked; Esc closes the list', async () => {
    const q = await panel();
    q.shell.captureWindows = [
      { id: 7, title: 'Budget.xlsx — Sheets', appName: 'Sheets', width: 1200, height: 800 },
      { id: 9, title: 'Terminal', appName: 'xterm', width: 800, height: 500 },
    ];
    await fireEvent.click(screen.getByTestId('capture-window'));
    const menu = await screen.findByRole('menu');
    expect(screen.getByTestId('capture-window')).toHaveAttribute('aria-expanded', 'true');
    const items = screen.getAllByRole('menuitem');
    expect(items.map((i) => i.textContent)).toEqual(['Budget.xlsx — Sheets Sheets · 1200 × 800', 'Terminal xterm · 800 × 500']);
    await fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(q.shell.quickCalls).toEqual([]); // the first Esc closed the list, not the panel
    await fireEvent.click(screen.getByTestId('capture-window'));
    await fireEvent.click((await screen.findAllByRole('menuitem'))[1]);
    await waitFor(() => expect(screen.getByRole('list', { name: 'Files to send' })).toHaveTextContent(/window-.*\.png/));
    expect(q.calls.find((c) => c.cmd === 'capture_window')!.args.id).toBe(9);
    expect(menu.isConnected).toBe(false);

    q.shell.captureWindows = [];
    await fireEvent.click(screen.getByTestId('capture-window'));
    expect(await screen.findByTestId('quick-notice')).toHaveTextContent('There is no other window to capture.');
  });

  it('names the window the capture came from only with the setting on: the one in focus before, or the one picked', async () => {
    const q = await panel();
    q.shell.captureWindows = [
      { id: 7, title: 'Budget.xlsx — Sheets', appName: 'Sheets', width: 1200, height: 800 },
      { id: 9, title: 'Terminal', appName: 'xterm', width: 800, height: 500 },
    ];
    q.shell.focusedBefore = 7;
    const field = screen.getByLabelText(/^Message to /) as HTMLTextAreaElement;
    // off (the default): the shell names nothing, the message stays as typed
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await waitFor(() => expect(screen.getByRole('list', { name: 'Files to send' })).toHaveTextContent(/screen-.*\.png/));
    await waitFor(() => expect(q.calls.some((c) => c.cmd === 'capture_named_window')).toBe(true));
    expect(field.value).toBe('');

    q.shell.settings.captureNamesWindow = true;
    await fireEvent.input(field, { target: { value: 'What is wrong here?' } });
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await waitFor(() => expect(field.value).toBe('From the window “Budget.xlsx — Sheets” (Sheets)\nWhat is wrong here?'));
    // a second capture of the same window does not repeat the line
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await waitFor(() => expect(q.calls.filter((c) => c.cmd === 'capture_named_window')).toHaveLength(3));
    expect(field.value).toBe('From the window “Budget.xlsx — Sheets” (Sheets)\nWhat is wrong here?');
    // "Window": the picked one is named
    await fireEvent.click(screen.getByTestId('capture-window'));
    await fireEvent.click((await screen.findAllByRole('menuitem'))[1]);
    await waitFor(() => expect(field.value).toMatch(/^From the window “Terminal” \(xterm\)\nFrom the window “Budget/));
    expect(q.calls.filter((c) => c.cmd === 'capture_named_window').at(-1)!.args.picked).toBe(9);
  });

  it('"Region" shows the frozen screen, takes the rectangle drawn on it, and Esc gives up', async () => {
    const q = await panel();
    await fireEvent.click(screen.getByTestId('capture-region'));
    const picker = await screen.findByTestId('region-picker');
    const img = picker.querySelector('img')!;
    Object.defineProperty(img, 'naturalWidth', { value: 1920 });
    Object.defineProperty(img, 'naturalHeight', { value: 1080 });
    img.getBoundingClientRect = () => ({ left: 0, top: 0, width: 960, height: 540, right: 960, bottom: 540, x: 0, y: 0, toJSON: () => ({}) });
    await fireEvent.load(img);
    // the window goes on screen once the still is loaded
    await waitFor(() => expect(q.calls.some((c) => c.cmd === 'capture_region_show')).toBe(true));
    const frame = img.parentElement!;
    await fireEvent.pointerDown(frame, { button: 0, clientX: 100, clientY: 50, pointerId: 1 });
    await fireEvent.pointerMove(frame, { clientX: 300, clientY: 250, pointerId: 1 });
    expect(screen.getByTestId('region-selection')).toHaveTextContent('400 × 400');
    await fireEvent.pointerUp(frame, { clientX: 400, clientY: 300, pointerId: 1 });
    // the page's 960×540 shows the 1920×1080 still: the rectangle is in the still's pixels
    await waitFor(() => expect(q.shell.regionEnds).toEqual([{ x: 200, y: 100, width: 600, height: 500 }]));
    await waitFor(() => expect(screen.getByRole('list', { name: 'Files to send' })).toHaveTextContent(/region-.*\.png/));
    expect(screen.queryByTestId('region-picker')).toBeNull();

    await fireEvent.click(screen.getByTestId('capture-region'));
    const again = await screen.findByTestId('region-picker');
    await fireEvent.keyDown(again, { key: 'Escape' });
    await waitFor(() => expect(q.shell.regionEnds).toEqual([{ x: 200, y: 100, width: 600, height: 500 }, null]));
    await waitFor(() => expect(screen.queryByTestId('region-picker')).toBeNull());
    expect(q.shell.quickCalls).toEqual([]); // Esc gave up the region, the panel stays
  });

  it('the capture shortcut opens the panel on a region capture (asked at the start and at each focus)', async () => {
    const q = await panel();
    expect(q.calls.filter((c) => c.cmd === 'quick_take_capture').length).toBeGreaterThan(0);
    expect(screen.queryByTestId('region-picker')).toBeNull();
    q.shell.capturePending = true;
    window.dispatchEvent(new Event('focus'));
    expect(await screen.findByTestId('region-picker')).toBeInTheDocument();
    expect(q.calls.filter((c) => c.cmd === 'capture_region_begin')).toHaveLength(1);
    expect(q.shell.capturePending).toBe(false);
  });

  it('explains before the OS asks for the screen (macOS), and captures nothing when the user says not now or the OS says no', async () => {
    const q = await panel();
    q.shell.captureAccess = 'unknown';
    await fireEvent.click(screen.getByTestId('capture-screen'));
    const dialog = await screen.findByRole('dialog', { name: 'Let Hermes see your screen?' });
    expect(dialog).toHaveTextContent('sends it only to the agent picked in this panel');
    await fireEvent.click(screen.getByRole('button', { name: 'Not now' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(q.calls.some((c) => c.cmd === 'capture_screen' || c.cmd === 'capture_access_request')).toBe(false);

    q.shell.captureAccessAnswer = 'denied';
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await fireEvent.click(await screen.findByTestId('capture-permission-continue'));
    expect(await screen.findByTestId('quick-notice')).toHaveTextContent('Screen Recording');
    expect(screen.getByTestId('quick-notice')).toHaveAttribute('role', 'alert');
    expect(q.calls.some((c) => c.cmd === 'capture_screen')).toBe(false);

    q.shell.captureAccess = 'unknown';
    q.shell.captureAccessAnswer = 'granted';
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await fireEvent.click(await screen.findByTestId('capture-permission-continue'));
    await waitFor(() => expect(q.calls.filter((c) => c.cmd === 'capture_screen')).toHaveLength(1));
  });

  it('a capture waiting in the composer never goes to another agent: picking another one drops it', async () => {
    const q = await panel();
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await screen.findByRole('list', { name: 'Files to send' });
    await fireEvent.change(screen.getByTestId('quick-agent'), { target: { value: 'p2' } });
    await waitFor(() => expect(q.app.selection?.profileId).toBe('p2'));
    await waitFor(() => expect(screen.queryByRole('list', { name: 'Files to send' })).toBeNull());
    await fireEvent.input(screen.getByLabelText(/^Message to /), { target: { value: 'hi' } });
    await fireEvent.keyDown(screen.getByLabelText(/^Message to /), { key: 'Enter' });
    await waitFor(() => expect(q.calls.filter((c) => c.cmd === 'send_command')).toHaveLength(1));
    expect(q.commands('file')).toEqual([]);
  });

  it('a picture waiting in the composer is cropped to the rectangle drawn on it', async () => {
    const q = await panel();
    await fireEvent.click(screen.getByTestId('capture-screen'));
    await screen.findByRole('list', { name: 'Files to send' });
    expect(await screen.findByTestId('attach-thumb')).toBeInTheDocument();
    await fireEvent.click(screen.getByTestId('attach-crop'));
    const picker = await screen.findByTestId('crop-picker');
    const img = picker.querySelector('img')!;
    Object.defineProperty(img, 'naturalWidth', { value: 1920 });
    Object.defineProperty(img, 'naturalHeight', { value: 1080 });
    img.getBoundingClientRect = () => ({ left: 10, top: 10, width: 640, height: 360, right: 650, bottom: 370, x: 10, y: 10, toJSON: () => ({}) });
    await fireEvent.load(img);
    expect(screen.getByTestId('crop-apply')).toBeDisabled();
    const frame = img.parentElement!;
    await fireEvent.pointerDown(frame, { button: 0, clientX: 10, clientY: 10, pointerId: 1 });
    await fireEvent.pointerUp(frame, { clientX: 330, clientY: 190, pointerId: 1 });
    await fireEvent.click(screen.getByTestId('crop-apply'));
    await waitFor(() => expect(screen.getByRole('list', { name: 'Files to send' })).toHaveTextContent(/-cut-.*\.png/));
    const crop = q.calls.find((c) => c.cmd === 'crop_image')!;
    expect(crop.args.rect).toEqual({ x: 0, y: 0, width: 960, height: 540 });
    expect(String(crop.args.token)).toMatch(/screen-.*\.png$/);
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
    expect(await screen.findByTestId('quick-ask-error')).toHaveTextContent('These keys are already another Hermes shortcut');
    expect(ipc.shell.settings.quickAskShortcut).toBe('Control+Alt+Space');
  });
});

describe('Settings → Shortcuts: the screen capture shortcut', () => {
  it('is saved on its own, and refused when it is the Quick Ask keys', async () => {
    const ipc = await renderApp();
    ipc.app.openSettings('shortcuts');
    const field = (await screen.findByTestId('capture-shortcut')) as HTMLInputElement;
    await waitFor(() => expect(field.value).toBe('Control+Alt+KeyS'));
    expect(field).toHaveAccessibleName('Screen capture shortcut');
    await fireEvent.input(field, { target: { value: 'Alt+F7' } });
    await fireEvent.change(field);
    await waitFor(() => expect(ipc.shell.settings.captureShortcut).toBe('Alt+F7'));
    expect(ipc.shell.settings.quickAskShortcut).toBe('Control+Alt+Space');
    await fireEvent.input(field, { target: { value: 'Alt+Control+Space' } });
    await fireEvent.change(field);
    expect(await screen.findByTestId('capture-error')).toHaveTextContent('These keys are already another Hermes shortcut');
    expect(ipc.shell.settings.captureShortcut).toBe('Alt+F7');
  });
});

describe('Settings → Shortcuts: naming the window in a capture', () => {
  it('is off by default, saved when ticked, and does not undo a shortcut changed on the same tab', async () => {
    const ipc = await renderApp();
    ipc.app.openSettings('shortcuts');
    const box = (await screen.findByTestId('capture-names-window')) as HTMLInputElement;
    expect(box.checked).toBe(false);
    expect(box).toHaveAccessibleName('Name the window in a capture’s message');
    const quick = screen.getByTestId('quick-ask-shortcut') as HTMLInputElement;
    await fireEvent.input(quick, { target: { value: 'Alt+F8' } });
    await fireEvent.change(quick);
    await waitFor(() => expect(ipc.shell.settings.quickAskShortcut).toBe('Alt+F8'));
    await fireEvent.click(box);
    await waitFor(() => expect(ipc.shell.settings.captureNamesWindow).toBe(true));
    expect(ipc.shell.settings.quickAskShortcut).toBe('Alt+F8');
    // the capture shortcut's field, saved after the Quick Ask one on the same tab, keeps both
    const capture = screen.getByTestId('capture-shortcut') as HTMLInputElement;
    await fireEvent.input(capture, { target: { value: 'Alt+F7' } });
    await fireEvent.change(capture);
    await waitFor(() => expect(ipc.shell.settings.captureShortcut).toBe('Alt+F7'));
    expect(ipc.shell.settings.quickAskShortcut).toBe('Alt+F8');
    expect(ipc.shell.settings.captureNamesWindow).toBe(true);
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
