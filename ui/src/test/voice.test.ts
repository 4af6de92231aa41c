import { describe, expect, it, vi } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { BackendError } from '../lib/backend/backend';
import { FakeVoiceBackend } from '../lib/backend/voice-fake';
import type { Backend } from '../lib/backend/backend';
import { AvatarDriver, applyToWindow, deriveState, encodeCall, setUnwatched, UNWATCHED_CLASS, syllableEnvelope } from '../lib/voice/avatar';
import { VoiceHub, type VoiceTarget } from '../lib/voice/voice.svelte';
import type { VoiceClip, VoiceSendTo } from '../lib/backend/voice';
import MicButton from '../lib/components/MicButton.svelte';
import { renderApp, ready, composer } from './helpers';
import { speechText } from '../lib/markdown/speech';

function renderMic(h: VoiceHub) {
  return render(MicButton, { props: { voice: h, profileId: 'p1' } });
}

const EVIL = `"); alert(1); ("\\' \` </script><script>alert(2)</script>\n\r\u2028\u2029 \${x} 🙂`;

function fakePage() {
  const got: { method: string; arg: unknown }[] = [];
  const api: Record<string, (a: unknown) => void> = {};
  for (const m of ['setState', 'speak', 'setVolume', 'setSpeechLevel']) api[m] = (a) => got.push({ method: m, arg: a });
  return { win: { hermesAvatar: api } as unknown as Window, got };
}

function hub(opts: { target?: VoiceTarget | null } = {}) {
  const vb = new FakeVoiceBackend();
  /** Clips that reached the chat: sent by the UI (hands-free) or by the shell and echoed (push-to-talk). */
  const sent: VoiceClip[] = [];
  const routes: VoiceSendTo[] = [];
  const settled: VoiceSendTo[] = [];
  const target: VoiceTarget | null =
    opts.target === undefined
      ? {
          profileId: 'p1',
          send: async (c) => void sent.push(c),
          route: () => {
            const r = { profileId: 'p1', session: null, ids: [`v${routes.length}a`, `v${routes.length}b`] };
            routes.push(r);
            return r;
          },
          adopt: (c) => void sent.push(c),
          settle: (r) => void settled.push(r),
        }
      : opts.target;
  const backend = { fileUrl: async (p: string) => `asset://localhost/${p}` } as unknown as Backend;
  const h = new VoiceHub(vb, backend, () => target);
  return { h, vb, sent, routes, settled };
}

const clip = (path: string, secs: number, size: number): VoiceClip => ({ path, secs, size, id: null, error: null });

describe('avatar driver (A-28)', () => {
  it('JSON-encodes every argument and the page receives hostile text intact', () => {
    const c = encodeCall('speak', EVIL);
    expect(c.json).toBe(JSON.stringify(EVIL));
    expect(c.json).not.toContain('\n');
    const { win, got } = fakePage();
    expect(applyToWindow(win, c)).toBe(true);
    expect(got).toEqual([{ method: 'speak', arg: EVIL }]);
  });

  it('levels are clamped numbers, states are strings, unknown methods are refused', () => {
    expect(encodeCall('setVolume', 7).json).toBe('1');
    expect(encodeCall('setVolume', Number.NaN).json).toBe('0');
    expect(encodeCall('setSpeechLevel', '1); alert(1' as unknown as number).json).toBe('0');
    expect(encodeCall('setState', 42).json).toBe('"42"');
    expect(() => encodeCall('constructor' as never, 'x')).toThrow();
    expect(applyToWindow(null, encodeCall('setState', 'idle'))).toBe(false);
    expect(applyToWindow({} as Window, encodeCall('setState', 'idle'))).toBe(false);
  });

  it('sends to the iframe and, when a window is open, through the shell; repeated states are skipped', () => {
    const { win, got } = fakePage();
    const external: [string, unknown][] = [];
    let open = false;
    const d = new AvatarDriver({ frame: () => win, external: () => open, callExternal: (m, a) => external.push([m, a]) });
    d.setState('thinking');
    d.setState('thinking');
    d.speak(EVIL);
    open = true;
    d.setVolume(0.42);
    expect(got.map((g) => g.method)).toEqual(['setState', 'speak', 'setVolume']);
    expect(external).toEqual([['setVolume', 0.42]]);
    d.replay();
    expect(got.at(-1)).toEqual({ method: 'setState', arg: 'thinking' });
  });

  it('a line said before the page was ready is said when it is, once, if still fresh', () => {
    vi.useFakeTimers();
    try {
      const { win, got } = fakePage();
      let frame: Window | null = null; // the iframe not loaded yet
      const d = new AvatarDriver({ frame: () => frame, external: () => false, callExternal: () => {} });
      d.setState('idle');
      d.speak('Run the build?');
      frame = win;
      d.replay();
      expect(got).toEqual([
        { method: 'setState', arg: 'idle' },
        { method: 'speak', arg: 'Run the build?' },
      ]);
      d.replay(); // said once
      expect(got.filter((g) => g.method === 'speak')).toHaveLength(1);
      // a page whose script has not run yet is no page either
      frame = {} as Window;
      d.speak('Soon.');
      frame = win;
      d.replay();
      expect(got.at(-1)).toEqual({ method: 'speak', arg: 'Soon.' });
      // too old by the time the page is ready
      frame = null;
      d.speak('An old line.');
      vi.advanceTimersByTime(AvatarDriver.UNSENT_MAX_MS + 1);
      frame = win;
      d.replay();
      expect(got.filter((g) => g.method === 'speak').map((g) => g.arg)).toEqual(['Run the build?', 'Soon.']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('derives the state: listening > speaking > agent frames > typing > idle', () => {
    const base = { protocol: 'idle', typing: false, listening: false, speaking: false };
    expect(deriveState(base)).toBe('idle');
    expect(deriveState({ ...base, typing: true })).toBe('thinking');
    expect(deriveState({ ...base, protocol: 'Thinking ' })).toBe('thinking');
    expect(deriveState({ ...base, protocol: 'thinking', speaking: true })).toBe('speaking');
    expect(deriveState({ ...base, speaking: true, listening: true })).toBe('listening');
    // a card waiting for the user, a lost connection, a tool the agent says it runs
    expect(deriveState({ ...base, waiting: true, typing: true, protocol: 'thinking' })).toBe('waiting');
    expect(deriveState({ ...base, error: true, waiting: true })).toBe('error');
    expect(deriveState({ ...base, error: true, speaking: true })).toBe('speaking');
    expect(deriveState({ ...base, error: true, listening: true })).toBe('listening');
    expect(deriveState({ ...base, protocol: 'tool' })).toBe('tool');
    // hands-free on: the avatar listens when nothing else goes on, and gives way to everything else
    expect(deriveState({ ...base, micOpen: true })).toBe('listening');
    expect(deriveState({ ...base, micOpen: true, typing: true })).toBe('thinking');
    expect(deriveState({ ...base, micOpen: true, speaking: true })).toBe('speaking');
    expect(deriveState({ ...base, micOpen: true, waiting: true })).toBe('waiting');
  });

  it('holds the page still while nobody looks, through a class its style sheet answers (not the animations API)', () => {
    const doc = document.implementation.createHTMLDocument('avatar');
    // a script that touched the animations would override the page's own rest; nothing here may call them
    const touched: string[] = [];
    const anim = { playState: 'paused', pause: () => touched.push('pause'), play: () => touched.push('play') };
    (doc as unknown as { getAnimations: () => unknown[] }).getAnimations = () => [anim];
    const root = doc.documentElement;
    expect(setUnwatched(doc, true)).toBe(true);
    expect(root.classList.contains(UNWATCHED_CLASS)).toBe(true);
    expect(setUnwatched(doc, true)).toBe(false);
    expect(setUnwatched(doc, false)).toBe(true);
    expect(root.classList.contains(UNWATCHED_CLASS)).toBe(false);
    expect(setUnwatched(doc, false)).toBe(false);
    expect(touched).toEqual([]);
    // no page, or one of another origin (no document)
    expect(setUnwatched(null, true)).toBe(false);
    expect(setUnwatched({} as Document, true)).toBe(false);
  });

  it('the speech envelope stays in 0..1 and moves', () => {
    const vals = Array.from({ length: 200 }, (_, i) => syllableEnvelope(i * 40));
    expect(Math.min(...vals)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...vals)).toBeLessThanOrEqual(1);
    expect(new Set(vals.map((v) => v.toFixed(2))).size).toBeGreaterThan(20);
  });
});

describe('push-to-talk', () => {
  it('press starts, release stops and the shell sends every clip under the route\'s ids (A-24)', async () => {
    const { h, vb, sent, routes, settled } = hub();
    vb.nextStop = [clip('/tmp/a.wav', 250, 8_000_000), clip('/tmp/b.wav', 10, 320_044)];
    await h.press();
    expect(h.phase).toBe('recording');
    expect(vb.called('start')[0].args).toEqual(['push_to_talk']);
    vb.emit({ kind: 'level', level: 0.6 });
    expect(h.level).toBe(0.6);
    expect(h.avatar.sent.some((c) => c.method === 'setVolume' && c.json === '0.6')).toBe(true);
    expect(h.shown).toBe('idle');
    h.sync('idle', false);
    expect(h.shown).toBe('listening');
    await h.release();
    expect(h.phase).toBe('idle');
    // One call: stop + send (no second round trip through the page); the echoes carry the ids it was sent under.
    expect(vb.called('stop')[0].args).toEqual([routes[0]]);
    expect(sent.map((c) => [c.path, c.id])).toEqual([
      ['/tmp/a.wav', 'v0a'],
      ['/tmp/b.wav', 'v0b'],
    ]);
    expect(settled).toEqual(routes);
  });

  it('a release before the microphone opened still ends the recording', async () => {
    const { h, vb, sent } = hub();
    vb.startDelay = 20;
    const p = h.press();
    expect(h.phase).toBe('starting');
    await h.release();
    await p;
    expect(vb.called('stop')).toHaveLength(1);
    expect(h.phase).toBe('idle');
    expect(sent).toHaveLength(1);
  });

  it('too short: nothing sent, a transient hint', async () => {
    const { h, vb, sent, routes, settled } = hub();
    vb.nextStop = new BackendError({ code: 'too_short', message: 'recording too short' });
    await h.press();
    await h.release();
    expect(sent).toHaveLength(0);
    expect(h.error?.code).toBe('too_short');
    expect(settled).toEqual(routes); // the ids it would have used are forgotten
  });

  it('Esc cancels without sending', async () => {
    const { h, vb, sent } = hub();
    await h.press();
    await h.cancel();
    await h.release();
    expect(vb.called('cancel')).toHaveLength(1);
    expect(vb.called('stop')).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it('an unplugged microphone ends recording with its message', async () => {
    const { h, vb } = hub();
    await h.press();
    vb.emit({ kind: 'error', code: 'microphone_lost', message: 'gone' });
    expect(h.phase).toBe('idle');
    expect(h.error?.code).toBe('microphone_lost');
  });

  it('nothing starts without an open conversation', async () => {
    const { h, vb } = hub({ target: null });
    await h.press();
    expect(vb.called('start')).toHaveLength(0);
  });
});

describe('hands-free and the agent voice', () => {
  it('sends each utterance; barge-in stops read-aloud', async () => {
    const { h, vb, sent } = hub();
    await h.setHandsFree(true);
    expect(h.phase).toBe('handsfree');
    expect(vb.called('start')[0].args).toEqual(['hands_free']);
    h.onTts('started');
    expect(h.speaking).toBe(true);
    vb.emit({ kind: 'speech_start' });
    expect(h.recording).toBe(true);
    vb.emit({ kind: 'barge_in' });
    expect(vb.called('ttsStop')).toHaveLength(1);
    expect(h.speaking).toBe(false);
    vb.emit({ kind: 'utterance', clips: [clip('/tmp/u1.wav', 1.4, 44_844)] });
    await waitFor(() => expect(sent.map((c) => c.path)).toEqual(['/tmp/u1.wav']));
    await h.setHandsFree(false);
    expect(h.phase).toBe('idle');
    expect(vb.called('stop')).toHaveLength(1);
  });

  it('speech too short to send stops showing that it hears the user', async () => {
    const { h, vb, sent } = hub();
    await h.setHandsFree(true);
    vb.emit({ kind: 'speech_start' });
    expect(h.recording).toBe(true);
    // a cough: the listener discards it
    vb.emit({ kind: 'speech_end' });
    expect(h.recording).toBe(false);
    expect(h.phase).toBe('handsfree');
    expect(sent).toHaveLength(0);
  });

  it('a microphone lost in hands-free keeps hands-free on, says so, and clears when it is back (#28 item 2)', async () => {
    vi.useFakeTimers();
    try {
      const { h, vb } = hub();
      await h.setHandsFree(true);
      expect(h.sync('idle', false)).toBe('listening');
      vb.emit({ kind: 'level', level: 0.5 });
      vb.emit({ kind: 'mic_lost', message: 'The microphone was disconnected.' });
      expect(h.phase).toBe('handsfree');
      expect(h.micLost).toBe('The microphone was disconnected.');
      expect(h.level).toBe(0);
      expect(h.sync('idle', false)).toBe('error');
      vb.emit({ kind: 'mic_back', device: 'USB Mic', after_loss: true });
      expect(h.micLost).toBeNull();
      expect(h.micBack).toBe('USB Mic');
      expect(h.sync('idle', false)).toBe('listening');
      vi.advanceTimersByTime(4500);
      expect(h.micBack).toBeNull();
      // the tray's "Stop listening"
      vb.emit({ kind: 'stopped' });
      expect(h.phase).toBe('idle');
      expect(h.sync('idle', false)).toBe('idle');
      expect(vb.called('start')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a stopped capture's level still in flight does not light the next capture's meter", async () => {
    const { h, vb } = hub();
    await h.setHandsFree(true);
    vb.emit({ kind: 'level', level: 0.9 });
    expect(h.level).toBe(0.9);
    await h.setHandsFree(false);
    vb.emitLate({ kind: 'level', level: 0.9 });
    vb.emitLate({ kind: 'speech_start' });
    expect(h.level).toBe(0);
    expect(h.speech).toBe(false);
    await h.setHandsFree(true);
    vb.emitLate({ kind: 'level', level: 0.8 }); // the new capture's channel is its own
    expect(h.level).toBe(0.8);
    await h.setHandsFree(false);
    // push-to-talk: the same after a release and after Esc
    await h.press();
    await h.release();
    vb.emitLate({ kind: 'level', level: 0.7 });
    expect(h.level).toBe(0);
    await h.press();
    await h.cancel();
    vb.emitLate({ kind: 'level', level: 0.7 });
    expect(h.level).toBe(0);
  });

  it('reads final replies aloud only where enabled; the avatar always gets the line', async () => {
    localStorage.clear();
    const { h, vb } = hub();
    h.onReply('p1', 'Hello there.');
    expect(vb.called('ttsSpeak')).toHaveLength(0);
    expect(h.avatar.sent.at(-1)).toEqual({ method: 'speak', json: '"Hello there."' });
    h.setReadAloud('p1', true);
    h.onReply('p1', EVIL);
    // hostile text is only ever spoken (as its words), never run
    expect(vb.called('ttsSpeak')[0].args).toEqual([speechText(EVIL), null, null]);
    expect(speechText(EVIL)).toContain('alert(1)');
    h.onReply('p1', 'It **works**: see [the docs](https://example.com/docs) and `cargo test`.');
    expect(vb.called('ttsSpeak')[1].args).toEqual(['It works: see the docs and cargo test.', null, null]);
    expect(h.avatar.sent.at(-1)).toEqual({ method: 'speak', json: '"It works: see the docs and cargo test."' });
    h.onTts('started');
    expect(h.sync('idle', false)).toBe('speaking');
    h.onTts('ended');
    expect(h.sync('idle', false)).toBe('idle');
    h.dispose();
  });

  it("another agent's reply (not the one on screen) is neither in the avatar's bubble nor read aloud", async () => {
    localStorage.clear();
    const { h, vb } = hub();
    h.setReadAloud('p2', true);
    const before = h.avatar.sent.length;
    h.onReply('p2', 'From the agent in the background.');
    expect(h.avatar.sent.length).toBe(before);
    expect(vb.called('ttsSpeak')).toHaveLength(0);
    h.onReply('p1', 'From the agent on screen.');
    expect(h.avatar.sent.at(-1)).toEqual({ method: 'speak', json: '"From the agent on screen."' });
    h.dispose();
  });

  it("a card of the agent on screen is asked in the avatar's bubble, not read aloud; another agent's is not", async () => {
    localStorage.clear();
    const { h, vb } = hub();
    h.setReadAloud('p1', true);
    h.onReply('p1', 'Here is the plan.');
    h.onCard('p1', '  Run the migration on production?  ');
    expect(h.avatar.sent.at(-1)).toEqual({ method: 'speak', json: '"Run the migration on production?"' });
    expect(vb.called('ttsSpeak').map((c) => c.args[0])).toEqual(['Here is the plan.']);
    const before = h.avatar.sent.length;
    h.onCard('p2', 'From the agent in the background?');
    h.onCard('p1', '   ');
    expect(h.avatar.sent.length).toBe(before);
    h.dispose();
  });

  it("an agent's voice note plays in one page: not in the Quick Ask panel's while it is kept hidden", async () => {
    localStorage.clear();
    const played: string[] = [];
    const real = globalThis.Audio;
    globalThis.Audio = class {
      constructor(public src: string) {}
      addEventListener() {}
      play() {
        played.push(this.src);
        return Promise.resolve();
      }
    } as unknown as typeof Audio;
    const hidden = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    try {
      const { h } = hub();
      h.setReadAloud('p1', true);
      h.view = 'quick';
      await h.onVoiceNote('p1', 'media/note.wav');
      expect(played).toEqual([]);
      hidden.mockReturnValue('visible');
      await h.onVoiceNote('p1', 'media/note.wav');
      expect(played).toEqual(['asset://localhost/media/note.wav']);
      // the main window's page plays it hidden or not (the panel's page is the one kept out of sight)
      hidden.mockReturnValue('hidden');
      h.view = 'main';
      await h.onVoiceNote('p1', 'media/note2.wav');
      expect(played).toHaveLength(2);
      h.dispose();
    } finally {
      hidden.mockRestore();
      globalThis.Audio = real;
    }
  });

  it('TTS unavailable: speaking fails quietly', async () => {
    const { h, vb } = hub();
    vb.ttsAvailable = false;
    h.setReadAloud('p1', true);
    expect(() => h.onReply('p1', 'Hi.')).not.toThrow();
    const st = await h.loadTts();
    expect(st.available).toBe(false);
    expect(st.detail).toContain('speech-dispatcher');
  });

  it('a detached or remote avatar window also gets the calls through the shell', async () => {
    localStorage.clear();
    const { h, vb } = hub();
    // asked first (nothing open), then opened once the user allows its origin
    await h.useRemote('p1', 'http://127.0.0.1:9/avatar.html');
    expect(h.remote).toEqual({ kind: 'ask', origin: 'http://127.0.0.1:9', agentHost: '127.0.0.1', foreign: false });
    expect(h.remoteAvatar).toBeNull();
    await h.answerRemote(true);
    expect(vb.called('avatarConsent').at(-1)?.args).toEqual(['p1', 'http://127.0.0.1:9', 'allowed']);
    expect(h.remote.kind).toBe('open');
    expect(h.remoteAvatar).toBe('http://127.0.0.1:9/avatar.html');
    h.avatar.speak(EVIL);
    expect(vb.called('avatarCall').at(-1)?.args).toEqual(['speak', EVIL]);
    // plain http to a public host: blocked, the bundled avatar
    await h.useRemote('p1', 'http://192.0.2.1/x.html');
    expect(h.remote).toEqual({ kind: 'blocked', origin: 'http://192.0.2.1', reason: 'notSecure' });
    expect(h.remoteAvatar).toBeNull();
    // "not now" is remembered per profile; forgetting it asks again
    await h.useRemote('p2', 'https://elsewhere.example/a/');
    expect(h.remote).toMatchObject({ kind: 'ask', foreign: true });
    await h.answerRemote(false);
    expect(h.remote.kind).toBe('declined');
    await h.forgetRemote('p2', 'https://elsewhere.example');
    expect(h.remote.kind).toBe('ask');
    await h.setDetached(true);
    expect(vb.called('avatarDetach').at(-1)?.args).toEqual([true, false]);
    h.windowClosed('avatar');
    expect(h.avatarPrefs.detached).toBe(false);
  });
});

describe('mic button', () => {
  it('hold to talk: recording look with timer and level, release sends', async () => {
    const { h, vb, sent } = hub();
    renderMic(h);
    const btn = screen.getByRole('button', { name: /Hold to talk/ });
    await fireEvent.pointerDown(btn, { button: 0, pointerId: 1 });
    await waitFor(() => expect(h.phase).toBe('recording'));
    expect(await screen.findByRole('status')).toHaveTextContent('0:00');
    vb.emit({ kind: 'level', level: 0.8 });
    await waitFor(() => expect(btn.dataset.level).toBe('0.80'));
    expect(btn).toHaveAttribute('aria-pressed', 'true');
    await fireEvent.pointerUp(btn, { button: 0, pointerId: 1 });
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(h.phase).toBe('idle');
  });

  it('Esc on the button cancels; the hands-free toggle switches modes', async () => {
    const { h, vb } = hub();
    renderMic(h);
    const btn = screen.getByRole('button', { name: /Hold to talk/ });
    await fireEvent.keyDown(btn, { key: ' ' });
    await waitFor(() => expect(h.phase).toBe('recording'));
    await fireEvent.keyDown(btn, { key: 'Escape' });
    await waitFor(() => expect(vb.called('cancel')).toHaveLength(1));
    const hf = screen.getByRole('button', { name: 'Hands-free' });
    await fireEvent.click(hf);
    await waitFor(() => expect(h.phase).toBe('handsfree'));
    expect(screen.getByRole('button', { name: 'Turn hands-free off' })).toHaveAttribute('aria-pressed', 'true');
    expect(screen.getByRole('status')).toHaveTextContent('listening');
  });

  it('hands-free without its microphone: a dashed ring, an alert that says it comes back, then the device it is on', async () => {
    const { h, vb } = hub();
    renderMic(h);
    await fireEvent.click(screen.getByRole('button', { name: 'Hands-free' }));
    await waitFor(() => expect(h.phase).toBe('handsfree'));
    vb.emit({ kind: 'mic_lost', message: 'x' });
    expect(await screen.findByRole('alert')).toHaveTextContent('disconnected. Hands-free listens again as soon as it is back');
    const mic = screen.getByRole('button', { name: 'Hands-free: microphone disconnected' });
    expect(mic).toHaveClass('lost');
    vb.emit({ kind: 'mic_back', device: 'USB Mic', after_loss: true });
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
    expect(screen.getByRole('status')).toHaveTextContent('Listening again on USB Mic');
    expect(mic).not.toHaveClass('lost');
  });

  it('shows why the microphone failed', async () => {
    const { h, vb } = hub();
    vb.startError = new BackendError({ code: 'no_microphone', message: 'no microphone found' });
    renderMic(h);
    await fireEvent.pointerDown(screen.getByRole('button', { name: /Hold to talk/ }), { button: 0, pointerId: 1 });
    expect(await screen.findByRole('alert')).toHaveTextContent('No microphone found');
  });
});

/** The app with a microphone: `voice_start` keeps the level Channel's id, `voice_stop` answers with `stop(send)`. */
async function appWithMic(stop: (to: VoiceSendTo) => VoiceClip[]) {
  const mic: { id: number | null } = { id: null };
  const ipc = await renderApp({
    handlers: {
      voice_start: (a) => {
        mic.id = (a.onEvent as { id: number }).id;
        return 'Built-in Microphone';
      },
      voice_stop: (a) => stop(a.send as VoiceSendTo),
    },
  });
  return { ipc, mic };
}

describe('in the app (mockIPC: the generated bindings and a real Channel)', () => {
  it('hold the mic, release: the shell sends the audio in the same call, the echo is a voice note (A-23)', async () => {
    const { ipc, mic: voiceChannel } = await appWithMic((to) => {
      // The engine's events for it overtake this reply (they travel on the connection's Channel).
      ipc.emit({ event: 'sent', id: to.ids[0] });
      ipc.emit({ event: 'delivered', id: to.ids[0] });
      return [{ path: '/data/tmp/voice-1.wav', secs: 3.2, size: 102_444, id: to.ids[0], error: null }];
    });
    await ready(ipc);
    expect(composer()).toBeInTheDocument();
    const mic = screen.getByRole('button', { name: /Hold to talk/ });
    await fireEvent.pointerDown(mic, { button: 0, pointerId: 1 });
    await waitFor(() => expect(voiceChannel.id).not.toBeNull());
    expect(ipc.calls.find((c) => c.cmd === 'voice_start')?.args.mode).toBe('push_to_talk');
    const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, d: unknown) => void } })
      .__TAURI_INTERNALS__;
    internals.runCallback(voiceChannel.id!, { index: 0, message: { kind: 'level', level: 0.5 } });
    await waitFor(() => expect(mic.dataset.level).toBe('0.50'));
    await fireEvent.pointerUp(mic, { button: 0, pointerId: 1 });
    await waitFor(() => expect(document.querySelector('.voice')).not.toBeNull());
    const stop = ipc.calls.find((c) => c.cmd === 'voice_stop')!;
    const to = stop.args.send as VoiceSendTo;
    expect(to.profileId).toBe(ipc.app.currentSession!.profile.id);
    expect(new Set(to.ids).size).toBe(to.ids.length);
    expect(ipc.commands('audio')).toHaveLength(0); // the shell sent it: no second call from the page
    const row = document.querySelector(`[data-message-id="${to.ids[0]}"]`) as HTMLElement;
    expect(row).not.toBeNull();
    // The early `sent`/`delivered` were kept for the echo, not lost.
    await waitFor(() => expect(within(row).getByLabelText('Delivered')).toBeInTheDocument());
  });

  it('a clip the shell could not send shows failed, and retry sends it as an audio command with its id', async () => {
    const { ipc, mic: voiceChannel } = await appWithMic((to) => {
      const error = { code: 'not_connected' as const, message: 'this profile is not connected' };
      return [{ path: '/data/tmp/voice-2.wav', secs: 2, size: 64_044, id: to.ids[0], error }];
    });
    await ready(ipc);
    const mic = screen.getByRole('button', { name: /Hold to talk/ });
    await fireEvent.pointerDown(mic, { button: 0, pointerId: 1 });
    await waitFor(() => expect(voiceChannel.id).not.toBeNull());
    await fireEvent.pointerUp(mic, { button: 0, pointerId: 1 });
    const id = ((ipc.calls.find((c) => c.cmd === 'voice_stop')?.args.send as VoiceSendTo | undefined)?.ids ?? [])[0];
    await waitFor(() => expect(document.querySelector(`[data-message-id="${id}"] .bubble.failed`)).not.toBeNull());
    await fireEvent.click(await screen.findByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(ipc.commands('audio')).toHaveLength(1));
    expect(ipc.commands('audio')[0]).toMatchObject({ cmd: 'audio', path: '/data/tmp/voice-2.wav', id });
  });

  it('the avatar pane embeds the bundled page in a same-origin iframe with a detach button', async () => {
    window.innerWidth = 1280;
    const ipc = await renderApp();
    await ready(ipc);
    const frame = document.querySelector('#avatar-pane iframe') as HTMLIFrameElement | null;
    expect(frame?.getAttribute('src')).toBe('avatar/avatar.html?theme=light');
    const detach = screen.getByRole('button', { name: 'Detach into a floating window' });
    await fireEvent.click(detach);
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'avatar_detach' && c.args.open === true)).toBe(true));
    await waitFor(() => expect(document.querySelector('#avatar-pane iframe')).toBeNull());
    expect(screen.getByText('The avatar floats in its own window.')).toBeInTheDocument();
    localStorage.clear();
  });

  it('ready.avatar_url: the pane asks with the origin, and only "Show it" opens it in its own window (A-27)', async () => {
    window.innerWidth = 1280;
    let allowed = false;
    const page = { origin: 'https://agent.example', agentHost: 'agent.example', foreign: false };
    const ipc = await renderApp({
      handlers: {
        avatar_remote: (a) => (a.url === null ? { kind: 'closed' } : { kind: allowed ? 'open' : 'ask', ...page }),
        avatar_consent: (a) => {
          allowed = a.consent === 'allowed';
          return null;
        },
      },
    });
    ipc.emit({ event: 'ready', session: 's', avatar_url: 'https://agent.example/avatar/', capabilities: {}, features: { files: true, voice: true } });
    const card = await screen.findByTestId('avatar-consent');
    expect(within(card).getByTestId('avatar-consent-origin')).toHaveTextContent('https://agent.example');
    expect(within(card).queryByTestId('avatar-consent-foreign')).toBeNull();
    expect(ipc.calls.find((c) => c.cmd === 'avatar_remote')?.args).toMatchObject({ url: 'https://agent.example/avatar/' });
    // the bundled avatar meanwhile, and never the remote page in the pane
    expect(document.querySelector('#avatar-pane iframe')?.getAttribute('src')).toContain('avatar/avatar.html');
    await fireEvent.click(within(card).getByRole('button', { name: 'Show it' }));
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'avatar_consent' && c.args.consent === 'allowed')).toBe(true));
    await waitFor(() => expect(document.querySelector('#avatar-pane iframe')).toBeNull());
    expect(screen.queryByTestId('avatar-consent')).toBeNull();
    expect(screen.getByText('Showing the agent’s own avatar in its window.')).toBeInTheDocument();
    expect(document.body.innerHTML).not.toContain('src="https://agent.example');
    vi.restoreAllMocks();
  });

  it('a page on another host is asked about as such; "Not now" leaves a quiet line with a way back', async () => {
    window.innerWidth = 1280;
    let answer: string | null = null;
    const page = { origin: 'https://cdn.other.example', agentHost: 'agent.example', foreign: true };
    const ipc = await renderApp({
      handlers: {
        avatar_remote: (a) =>
          a.url === null ? { kind: 'closed' } : { kind: answer === 'declined' ? 'declined' : 'ask', ...page },
        avatar_consent: (a) => {
          answer = a.consent as string | null;
          return null;
        },
      },
    });
    ipc.emit({ event: 'ready', session: 's', avatar_url: 'https://cdn.other.example/face', capabilities: {}, features: { files: true, voice: true } });
    const card = await screen.findByTestId('avatar-consent');
    expect(within(card).getByTestId('avatar-consent-foreign')).toHaveTextContent('not your agent’s server (agent.example)');
    await fireEvent.click(within(card).getByRole('button', { name: 'Not now' }));
    const line = await screen.findByTestId('avatar-consent-declined');
    expect(line).toHaveTextContent('https://cdn.other.example');
    expect(screen.queryByTestId('avatar-consent')).toBeNull();
    expect(ipc.calls.some((c) => c.cmd === 'avatar_consent' && c.args.consent === 'declined')).toBe(true);
    vi.restoreAllMocks();
  });
});

describe("the avatar and the agent's cards", () => {
  it("an approval card of the agent on screen is asked in the pane's avatar, through the app's real hooks", async () => {
    window.innerWidth = 1280;
    const ipc = await renderApp();
    await ready(ipc);
    const frame = await waitFor(() => {
      const f = document.querySelector('#avatar-pane iframe') as HTMLIFrameElement | null;
      expect(f?.contentWindow).toBeTruthy();
      return f as HTMLIFrameElement;
    });
    // the bundled page's API, as the pane's iframe has it
    const { win, got } = fakePage();
    (frame.contentWindow as unknown as { hermesAvatar: unknown }).hermesAvatar = (win as unknown as { hermesAvatar: unknown }).hermesAvatar;
    frame.dispatchEvent(new Event('load')); // (jsdom loads no page: the pane takes the frame on its load event)
    ipc.emit({
      event: 'prompt',
      id: 'card-1',
      kind: 'exec_approval',
      text: 'Allow this command?',
      options: [{ id: 'once', label: 'Allow once' }],
      command: 'rm -rf build/',
      timeout_seconds: 60,
    });
    await waitFor(() => expect(got).toContainEqual({ method: 'speak', arg: 'Allow this command?' }));
  });
});

describe('read-aloud toggle in the composer', () => {
  it('switches read-aloud for the profile; while speaking it becomes a stop button', async () => {
    localStorage.clear();
    const { h, vb } = hub();
    render(MicButton, { props: { voice: h, profileId: 'p1' } });
    const toggle = screen.getByRole('button', { name: 'Read replies aloud' });
    expect(toggle).toHaveAttribute('aria-pressed', 'false');
    await fireEvent.click(toggle);
    expect(h.readAloudOn('p1')).toBe(true);
    expect(JSON.parse(localStorage.getItem('hermes.voice.readAloud.v1')!)).toEqual({ p1: true });
    h.onTts('started');
    await fireEvent.click(await screen.findByRole('button', { name: 'Stop reading aloud' }));
    expect(vb.called('ttsStop')).toHaveLength(1);
    expect(await screen.findByRole('button', { name: 'Read replies aloud' })).toHaveAttribute('aria-pressed', 'true');
  });
});

describe('settings → voice', () => {
  it('remembers the microphone, says when it is missing, and when read-aloud is unavailable', async () => {
    const settings = { device: 'USB Headset', shortcut: 'CommandOrControl+Shift+Space', endSilenceMs: 600, ttsVoice: null, ttsRate: 1, echoCancellation: true, noiseSuppression: true };
    const ipc = await renderApp({
      handlers: {
        voice_settings: () => settings,
        voice_devices: () => ({
          host: 'PulseAudio',
          devices: [{ name: 'Built-in Microphone', id: 'pulse:0', isDefault: true }],
          selected: 'USB Headset',
          selectedMissing: true,
          error: null,
        }),
        tts_status: () => ({ available: false, detail: 'speech-dispatcher is not running', voices: [] }),
        voice_save_settings: (a) => a.settings,
      },
    });
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    await fireEvent.click(await screen.findByRole('tab', { name: 'Voice' }));
    expect(await screen.findByText(/“USB Headset” is not connected/)).toBeInTheDocument();
    expect(await screen.findByTestId('tts-unavailable')).toHaveTextContent('speech-dispatcher is not running');
    const select = screen.getByTestId('mic-select') as HTMLSelectElement;
    await fireEvent.change(select, { target: { value: '' } });
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'voice_save_settings')).toBe(true));
    expect((ipc.calls.find((c) => c.cmd === 'voice_save_settings')!.args.settings as { device: unknown }).device).toBeNull();
  });
});

describe('the avatar follows the app', () => {
  it('a card counts as waiting until the agent says it is done', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'prompt', id: 'k1', kind: 'clarify', text: 'CSV or JSON?', options: [{ id: 'c0', label: 'CSV' }] });
    await waitFor(() => expect(ipc.app.currentSession?.cardWaiting).toBe(true));
    ipc.emit({ event: 'prompt_done', prompt_id: 'k1', option_id: 'c0', expired: false });
    await waitFor(() => expect(ipc.app.currentSession?.cardWaiting).toBe(false));
  });
});

describe('each agent its own voice and look', () => {
  it('replies are read with the agent\'s voice and rate, the avatar wears its look', async () => {
    localStorage.clear();
    const { h, vb } = hub();
    h.setReadAloud('p1', true);
    h.onReply('p1', 'Plain default.');
    await Promise.resolve();
    expect(vb.called('ttsSpeak').at(-1)!.args).toEqual(['Plain default.', null, null]);
    h.setVoiceOf('p1', { ttsVoice: 'en-GB', ttsRate: 1.4, look: 'mint' });
    expect(h.avatar.sent.filter((c) => c.method === 'setLook').map((c) => c.json)).toEqual(['"mint"']);
    h.onReply('p1', 'In my own voice.');
    await Promise.resolve();
    expect(vb.called('ttsSpeak').at(-1)!.args).toEqual(['In my own voice.', 'en-GB', 1.4]);
    // remembered (a new hub reads it back), and another agent on screen takes its own (default) look
    const again = hub();
    expect(again.h.voiceOf('p1')).toEqual({ ttsVoice: 'en-GB', ttsRate: 1.4, look: 'mint' });
    h.showLookOf('p2');
    expect(h.avatar.sent.filter((c) => c.method === 'setLook').map((c) => c.json)).toEqual(['"mint"', '"lilac"']);
    // an unchanged look is not sent again; a page that reloads gets it back
    h.showLookOf('p2');
    expect(h.avatar.sent.filter((c) => c.method === 'setLook')).toHaveLength(2);
    h.avatar.replay();
    expect(h.avatar.sent.filter((c) => c.method === 'setLook').map((c) => c.json).at(-1)).toBe('"lilac"');
    localStorage.clear();
  });
});

describe('settings → voice: the agent\'s own voice and look', () => {
  it('the look and the voice chosen for the agent on screen are kept for it', async () => {
    localStorage.clear();
    await renderApp({
      handlers: {
        voice_settings: () => ({ device: null, shortcut: null, endSilenceMs: 600, ttsVoice: null, ttsRate: 1, echoCancellation: true, noiseSuppression: true }),
        voice_devices: () => ({ host: 'PulseAudio', devices: [], selected: null, selectedMissing: false, error: null }),
        tts_status: () => ({ available: true, detail: null, voices: [{ id: 'en-gb', name: 'English (UK)', language: 'en-GB' }] }),
      },
    });
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    await fireEvent.click(await screen.findByRole('tab', { name: 'Voice' }));
    const group = await screen.findByRole('group', { name: /own voice and look/ });
    const look = within(group).getByRole('combobox', { name: 'Avatar look' }) as HTMLSelectElement;
    expect(look.value).toBe('lilac');
    await fireEvent.change(look, { target: { value: 'ocean' } });
    const voiceSel = (await within(group).findByRole('combobox', { name: 'Voice' })) as HTMLSelectElement;
    expect(voiceSel.value).toBe('');
    await fireEvent.change(voiceSel, { target: { value: 'en-gb' } });
    const saved = JSON.parse(localStorage.getItem('hermes.voice.profiles.v1') ?? '{}');
    expect(Object.values(saved)).toEqual([{ look: 'ocean', ttsVoice: 'en-gb' }]);
    localStorage.clear();
  });
});

describe('a picture as the avatar (#28 item 4)', () => {
  const PIC = 'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==';

  it('the agent on screen wears its picture; another agent the drawn avatar; a reloaded page gets it back', async () => {
    const { h, vb } = hub();
    const images = () => h.avatar.sent.filter((c) => c.method === 'setImage').map((c) => JSON.parse(c.json));
    h.showLookOf('p1');
    expect(await h.pictureOf('p1')).toBeNull();
    expect(images()).toEqual([]); // no picture: nothing to change on the drawn avatar
    vb.nextPick = PIC;
    await h.pickPicture('p1');
    expect(vb.pictures.get('p1')).toBe(PIC);
    expect(images()).toEqual([PIC]);
    h.showLookOf('p2');
    await waitFor(() => expect(images()).toEqual([PIC, '']));
    h.showLookOf('p1');
    expect(images()).toEqual([PIC, '', PIC]);
    h.avatar.replay();
    expect(images().at(-1)).toBe(PIC);
    // a cancelled dialog changes nothing; a refused file says why
    vb.nextPick = null;
    await h.pickPicture('p1');
    expect(images()).toHaveLength(4);
    vb.nextPick = new Error('this is not a picture the app can read');
    await expect(h.pickPicture('p1')).rejects.toThrow(/not a picture/);
    await h.clearPicture('p1');
    expect(images().at(-1)).toBe('');
    expect(vb.pictures.has('p1')).toBe(false);
  });

  it('a picture kept by the shell is asked for once and shown when its agent is on screen', async () => {
    const { h, vb } = hub();
    vb.pictures.set('p1', PIC);
    const spy = vi.spyOn(vb, 'avatarPicture');
    h.showLookOf('p1');
    await waitFor(() => expect(h.avatar.sent.some((c) => c.method === 'setImage' && JSON.parse(c.json) === PIC)).toBe(true));
    h.showLookOf('p1');
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('settings → voice: pick, see it, go back to the drawn avatar', async () => {
    localStorage.clear();
    let kept: string | null = null;
    const ipc = await renderApp({
      handlers: {
        voice_settings: () => ({ device: null, shortcut: null, endSilenceMs: 600, ttsVoice: null, ttsRate: 1, echoCancellation: true, noiseSuppression: true }),
        voice_devices: () => ({ host: 'PulseAudio', devices: [], selected: null, selectedMissing: false, error: null }),
        tts_status: () => ({ available: false, detail: 'no', voices: [] }),
        avatar_picture: () => kept,
        avatar_picture_pick: () => (kept = PIC),
        avatar_picture_clear: () => void (kept = null),
      },
    });
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    await fireEvent.click(await screen.findByRole('tab', { name: 'Voice' }));
    const group = await screen.findByRole('group', { name: /own voice and look/ });
    await fireEvent.click(await within(group).findByRole('button', { name: 'Use a picture…' }));
    await waitFor(() => expect(group.querySelector('.thumb img')?.getAttribute('src')).toBe(PIC));
    expect(within(group).getByText(/stays on this computer/)).toBeInTheDocument();
    await fireEvent.click(within(group).getByRole('button', { name: 'Use the drawn avatar' }));
    await waitFor(() => expect(group.querySelector('.thumb img')).toBeNull());
    expect(ipc.calls.filter((c) => c.cmd === 'avatar_picture_clear')).toHaveLength(1);
    expect(within(group).getByRole('button', { name: 'Use a picture…' })).toBeInTheDocument();
  });
});

describe('settings → voice: echo cancellation', () => {
  it('on by default; turning it off saves it and greys out noise suppression', async () => {
    const settings = { device: null, shortcut: null, endSilenceMs: 600, ttsVoice: null, ttsRate: 1, echoCancellation: true, noiseSuppression: true };
    const ipc = await renderApp({
      handlers: {
        voice_settings: () => settings,
        voice_devices: () => ({ host: 'PulseAudio', devices: [], selected: null, selectedMissing: false, error: null }),
        tts_status: () => ({ available: true, detail: null, voices: [] }),
        voice_save_settings: (a) => a.settings,
      },
    });
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    await fireEvent.click(await screen.findByRole('tab', { name: 'Voice' }));
    const aec = (await screen.findByRole('checkbox', { name: /echo cancellation/ })) as HTMLInputElement;
    const ns = screen.getByRole('checkbox', { name: 'Noise suppression' }) as HTMLInputElement;
    expect([aec.checked, ns.checked, ns.disabled]).toEqual([true, true, false]);
    await fireEvent.click(aec);
    await waitFor(() => expect(ipc.calls.some((c) => c.cmd === 'voice_save_settings')).toBe(true));
    const saved = ipc.calls.find((c) => c.cmd === 'voice_save_settings')!.args.settings as { echoCancellation: boolean; noiseSuppression: boolean };
    expect(saved.echoCancellation).toBe(false);
    expect(saved.noiseSuppression).toBe(true);
    await waitFor(() => expect(ns.disabled).toBe(true));
  });
});

describe('start-up', () => {
  it('read-aloud on: connects to the speech engine once the window is up, not during the launch', async () => {
    localStorage.setItem('hermes.voice.readAloud.v1', JSON.stringify({ p1: true }));
    const ipc = await renderApp();
    await ready(ipc);
    const asked = () => ipc.calls.filter((c) => c.cmd === 'tts_status').length;
    expect(asked()).toBe(0);
    await waitFor(() => expect(asked()).toBe(1), { timeout: 5000 });
    localStorage.clear();
  }, 10000);

  it('read-aloud off: no speech engine until it is turned on', async () => {
    localStorage.clear();
    const ipc = await renderApp();
    await ready(ipc);
    const asked = () => ipc.calls.filter((c) => c.cmd === 'tts_status').length;
    await new Promise((r) => setTimeout(r, 3500));
    expect(asked()).toBe(0);
    await fireEvent.click(screen.getByRole('button', { name: 'Read replies aloud' }));
    await waitFor(() => expect(asked()).toBe(1));
    localStorage.clear();
  }, 10000);
});
