// A-3 decision: text, voice, files and card answers are on unless the agent switches one off. The engine decides from
// `ready.capabilities` and announces `ready.features`; the page follows `features` only, and says a feature is off
// before the user tries (attach, drop, paste, the mic, push-to-talk, hands-free).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { mockWindows } from '@tauri-apps/api/mocks';
import type { EngineEvent, Features } from '../lib/backend/types';
import { FakeVoiceBackend } from '../lib/backend/voice-fake';
import type { Backend } from '../lib/backend/backend';
import { VoiceHub } from '../lib/voice/voice.svelte';
import { setLocale } from '../lib/i18n/index.svelte';
import { adapterFeatures, composer, renderApp } from './helpers';

const NO_FILES = 'This agent does not accept files';
const NO_VOICE = 'This agent does not accept voice messages';

function readyWith(ipc: { emit: (e: EngineEvent) => void }, features: Features, capabilities: Record<string, never> | Record<string, unknown> = {}) {
  ipc.emit({ event: 'connecting', attempt: 1 });
  ipc.emit({ event: 'ready', session: 'mobile:desktop-84b9042da9357a03', capabilities: capabilities as never, features });
}

/** The app with the shell's event plugin answered, so that Tauri events (drag and drop, push-to-talk) can be fired. */
async function app() {
  mockWindows('main');
  const listeners = new Map<string, number[]>();
  const r = await renderApp({
    handlers: {
      'plugin:event|listen': (a) => {
        const ev = String(a.event);
        listeners.set(ev, [...(listeners.get(ev) ?? []), a.handler as number]);
        return a.handler;
      },
      'plugin:event|unlisten': () => null,
      file_info: (a) => ({ path: String(a.token), name: String(a.token).split('/').pop(), size: 10, mime: 'text/plain' }),
      pick_files: () => ['/home/u/a.txt'],
      voice_start: () => 'Built-in Microphone',
    },
  });
  const fire = (event: string, payload: unknown) => {
    const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } })
      .__TAURI_INTERNALS__;
    for (const id of listeners.get(event) ?? []) internals.runCallback(id, { event, id, payload });
  };
  await waitFor(() => expect(listeners.has('tauri://drag-enter') && listeners.has('files-dropped')).toBe(true));
  return { ...r, fire };
}

const attach = () => document.querySelector('.composer button.attach') as HTMLButtonElement;
const mic = () => document.querySelector('.voice-ctl button.mic') as HTMLButtonElement;
const handsFree = () => [...document.querySelectorAll('.voice-ctl button.hf')].at(-1) as HTMLButtonElement;
const called = (r: { calls: { cmd: string }[] }, cmd: string) => r.calls.filter((c) => c.cmd === cmd).length;

describe('what the agent accepts (A-3): said before the user tries', () => {
  beforeEach(() => setLocale('en'));
  afterEach(() => setLocale('en'));

  it('before the first ready (a fresh start or a restart) files and voice are on', async () => {
    const r = await app();
    expect(r.app.currentSession?.features).toEqual({ files: true, voice: true });
    expect(attach().getAttribute('aria-disabled')).toBe('false');
    expect(attach().title).toBe('Attach files');
    expect(mic().getAttribute('aria-disabled')).toBe('false');
    expect(mic().title).toMatch(/^Hold to talk/);
  });

  it('a real adapter that sends only {"max_media_bytes": N} gets files and voice, with its limit', async () => {
    const r = await app();
    readyWith(r, adapterFeatures({ max_media_bytes: 1_000_000 }), { max_media_bytes: 1_000_000 });
    await waitFor(() => expect(r.app.currentSession?.status.kind).toBe('ready'));
    expect(attach().getAttribute('aria-disabled')).toBe('false');
    expect(mic().getAttribute('aria-disabled')).toBe('false');
    expect(r.app.currentSession?.maxMediaBytes).toBe(1_000_000);
  });

  it('files off: the attach button says why and opens nothing; a drop and a paste are refused with the reason', async () => {
    const r = await app();
    readyWith(r, { files: false, voice: true, max_file_bytes: 0 });
    await waitFor(() => expect(attach().getAttribute('aria-disabled')).toBe('true'));
    expect(attach().title).toBe(NO_FILES);
    expect(screen.getByRole('button', { name: NO_FILES })).toBe(attach());
    await fireEvent.click(attach());
    expect(called(r, 'pick_files')).toBe(0);

    // the overlay says it while the files are dragged over the window
    r.fire('tauri://drag-enter', { paths: ['/home/u/a.txt'], position: { x: 10, y: 10 } });
    await waitFor(() => expect(document.querySelector('.drop')).not.toBeNull());
    expect(document.querySelector('.drop')?.classList.contains('off')).toBe(true);
    expect(document.querySelector('.drop')?.textContent).toContain(NO_FILES);
    expect(document.querySelector('.drop')?.textContent).not.toContain('Drop files to send');
    r.fire('tauri://drag-drop', { paths: ['/home/u/a.txt'], position: { x: 10, y: 10 } });
    r.fire('files-dropped', { files: ['/home/u/a.txt'] });
    await waitFor(() => expect(document.querySelector('.drop')).toBeNull());
    await waitFor(() => expect(document.querySelector('.composer .add-error')?.textContent?.trim()).toBe(NO_FILES));
    expect(called(r, 'file_info')).toBe(0);
    expect(screen.queryByRole('list', { name: 'Files to send' })).toBeNull();

    // an image pasted into the field: not written to a temporary file, the same reason
    const png = new File([new Uint8Array([137, 80, 78, 71])], 'shot.png', { type: 'image/png' });
    await fireEvent.paste(composer(), { clipboardData: { files: [png] } });
    expect(called(r, 'write_temp_file')).toBe(0);
    expect(document.querySelector('.composer .add-error')?.textContent?.trim()).toBe(NO_FILES);
    // text still goes
    await fireEvent.input(composer(), { target: { value: 'hello' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    await waitFor(() => expect(r.commands('text')).toHaveLength(1));
  });

  it('voice off: the mic and hands-free say why and record nothing, by pointer, key or the global shortcut', async () => {
    const r = await app();
    readyWith(r, { files: true, voice: false, max_file_bytes: 8 * 1024 * 1024 });
    await waitFor(() => expect(mic().getAttribute('aria-disabled')).toBe('true'));
    expect(mic().title).toBe(NO_VOICE);
    expect(screen.getAllByRole('button', { name: NO_VOICE })).toEqual([handsFree(), mic()]);
    await fireEvent.pointerDown(mic(), { button: 0, pointerId: 1 });
    await fireEvent.pointerUp(mic(), { button: 0, pointerId: 1 });
    await fireEvent.keyDown(mic(), { key: ' ' });
    await fireEvent.click(handsFree());
    // the push-to-talk shortcut works from anywhere: refused the same way, the reason by the mic
    r.fire('push-to-talk', { pressed: true });
    await waitFor(() => expect(document.querySelector('.voice-ctl .live.err')?.textContent).toContain(NO_VOICE));
    r.fire('push-to-talk', { pressed: false });
    await new Promise((res) => setTimeout(res, 20));
    expect(called(r, 'voice_start')).toBe(0);
    // files are still on
    expect(attach().getAttribute('aria-disabled')).toBe('false');
  });

  it('the page follows ready.features, never its own reading of capabilities', async () => {
    const r = await app();
    // (capabilities that would read as "off" to a page re-deriving them; the engine's decision says on)
    readyWith(r, { files: true, voice: true, max_file_bytes: 5000 }, { media: false, audio: false });
    await waitFor(() => expect(r.app.currentSession?.status.kind).toBe('ready'));
    expect(attach().getAttribute('aria-disabled')).toBe('false');
    expect(mic().getAttribute('aria-disabled')).toBe('false');
    expect(r.app.currentSession?.maxMediaBytes).toBe(5000);
  });

  it('v3 has no client-side file limit (the gateway decides, G-9)', async () => {
    const r = await app();
    readyWith(r, { files: true, voice: true });
    await waitFor(() => expect(r.app.currentSession?.status.kind).toBe('ready'));
    expect(r.app.currentSession?.maxMediaBytes).toBe(Number.POSITIVE_INFINITY);
  });

  it('the next ready decides again (the agent was reconfigured): the attach button comes back', async () => {
    const r = await app();
    readyWith(r, { files: false, voice: false, max_file_bytes: 0 });
    await waitFor(() => expect(attach().getAttribute('aria-disabled')).toBe('true'));
    r.emit({ event: 'disconnected', code: 'lost', reason: 'x', retry_in_ms: 1000 });
    readyWith(r, adapterFeatures({ max_media_bytes: 8388608 }), { max_media_bytes: 8388608 });
    await waitFor(() => expect(attach().getAttribute('aria-disabled')).toBe('false'));
    expect(mic().getAttribute('aria-disabled')).toBe('false');
  });

  it('speaks Russian and Chinese', async () => {
    const r = await app();
    readyWith(r, { files: false, voice: false, max_file_bytes: 0 });
    r.app.savePrefs({ locale: 'ru' });
    await waitFor(() => expect(attach().title).toBe('Этот агент не принимает файлы'));
    expect(mic().title).toBe('Этот агент не принимает голосовые сообщения');
    r.app.savePrefs({ locale: 'zh' });
    await waitFor(() => expect(attach().title).toBe('此智能体不接收文件'));
    expect(mic().title).toBe('此智能体不接收语音消息');
    r.app.savePrefs({ locale: 'en' });
  });
});

describe('the voice hub refuses to record for an agent without voice', () => {
  it('press and hands-free start nothing and say why', async () => {
    const vb = new FakeVoiceBackend();
    const target = {
      profileId: 'p1',
      voiceOff: true,
      send: async () => {},
      route: () => ({ profileId: 'p1', session: null, ids: [] }),
      adopt: () => {},
      settle: () => {},
    };
    const h = new VoiceHub(vb, {} as Backend, () => target);
    await h.press();
    expect(h.phase).toBe('idle');
    expect(h.error?.code).toBe('voice_off');
    await h.setHandsFree(true);
    expect(h.phase).toBe('idle');
    expect(vb.called('start')).toHaveLength(0);
    target.voiceOff = false;
    await h.press();
    expect(vb.called('start')).toHaveLength(1);
    await h.cancel();
  });
});
