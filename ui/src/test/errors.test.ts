// No raw SQL, OS or engine text reaches the user: every error code the backend can return reads as a sentence in
// English, Russian and Chinese. The lists are in src/lib/errors.ts: the `AppError` codes are the generated `ErrorCode`
// union (tsc checks each has a sentence); the Rust test `error::tests` (src-tauri/src/error.rs) checks the others
// against `Refusal::ALL_CODES` and `DisconnectCode`.
import { afterEach, describe, expect, it } from 'vitest';
import { screen, waitFor, within } from '@testing-library/svelte';
import {
  AGENT_ERROR_CODES,
  APP_ERROR_CODES,
  DISCONNECT_CODES,
  ENGINE_ERROR_CODES,
  ERROR_CODES,
  REFUSAL_CODES,
  appErrorText,
  disconnectText,
  eventErrorText,
  hostPort,
} from '../lib/errors';
import { setLocale, type Locale } from '../lib/i18n/index.svelte';
import en from '../lib/i18n/en';
import ru from '../lib/i18n/ru';
import zh from '../lib/i18n/zh';
import { errorMessage } from '../lib/backend/backend';
import { PROFILE, composer, ready, renderApp, setupIpc } from './helpers';
import { fireEvent, render } from '@testing-library/svelte';
import App from '../App.svelte';
import { TauriBackend } from '../lib/backend/tauri';
import { AppState } from '../lib/state/app.svelte';

const catalogs = { en, ru, zh };
const LOCALES: Locale[] = ['en', 'ru', 'zh'];
const SQL = 'could not queue the message: constraint violated: UNIQUE constraint failed: outbox.id';
const OS = 'network error: Connection refused (os error 111)';

afterEach(() => setLocale('en'));

describe('every error code has a sentence in every language', () => {
  it('the lists hold what they say (and the union is ERROR_CODES)', () => {
    expect(APP_ERROR_CODES.length).toBeGreaterThan(50);
    expect(new Set(APP_ERROR_CODES).size).toBe(APP_ERROR_CODES.length);
    expect(REFUSAL_CODES).toHaveLength(23);
    expect(DISCONNECT_CODES).toHaveLength(12);
    // a refused command comes back as a failed call with the refusal's code: every one is an AppError code
    for (const c of REFUSAL_CODES) expect(APP_ERROR_CODES).toContain(c);
    for (const c of [...APP_ERROR_CODES, ...REFUSAL_CODES, ...ENGINE_ERROR_CODES, ...AGENT_ERROR_CODES])
      expect(ERROR_CODES).toContain(c);
  });

  for (const loc of LOCALES) {
    it(`${loc}: every AppError code (a failed call) — each its own sentence, never the general one`, () => {
      setLocale(loc);
      const general = catalogs[loc]['error.app.unknown'];
      for (const code of APP_ERROR_CODES) {
        const text = appErrorText(code);
        expect(text.trim(), code).not.toBe('');
        expect(text, code).not.toBe(general);
        expect(text, code).not.toMatch(/[{}]|error\.(app|code)\./);
      }
    });

    it(`${loc}: refusals, the engine's and the agent's codes (on a message or as a notice)`, () => {
      setLocale(loc);
      for (const code of [...REFUSAL_CODES, ...ENGINE_ERROR_CODES, ...AGENT_ERROR_CODES]) {
        const text = eventErrorText(code);
        expect(text, code).not.toBeNull();
        expect(text!.trim(), code).not.toBe('');
        expect(text, code).not.toMatch(/[{}]/);
      }
    });

    it(`${loc}: every way a connection drops names the address`, () => {
      setLocale(loc);
      for (const code of DISCONNECT_CODES) {
        expect(`disconnect.${code}` in catalogs[loc], code).toBe(true);
        const text = disconnectText(code, 'ws://127.0.0.1:8787/ws', OS);
        expect(text, code).toContain('127.0.0.1:8787');
        expect(text, code).not.toMatch(/[{}]|os error/);
      }
    });
  }

  it('a code nobody listed still reads as a sentence, not as the raw message', () => {
    expect(errorMessage({ code: 'brand_new', message: SQL })).toBe(catalogs.en['error.app.unknown']);
    expect(errorMessage(new Error(SQL))).toBe(catalogs.en['error.app.internal']);
    expect(eventErrorText('brand_new')).toBeNull();
    expect(appErrorText('toString')).toBe(catalogs.en['error.app.unknown']);
  });

  it("a failed call's `internal` is the app's own sentence, not the agent's", () => {
    expect(appErrorText('internal')).toBe(catalogs.en['error.app.internal']);
    expect(eventErrorText('internal')).toBe(catalogs.en['error.code.internal']);
    expect(appErrorText('not_found')).toBe(catalogs.en['error.code.not_found']);
  });

  it('the connection line: "Can\'t reach host:port — connection refused", and the others', () => {
    expect(disconnectText('refused', 'ws://127.0.0.1:8787/ws', OS)).toBe("Can't reach 127.0.0.1:8787 — connection refused");
    expect(disconnectText('dns', 'wss://agent.example.com/ws')).toBe("Can't reach agent.example.com:443 — the name was not found");
    expect(disconnectText('http', 'ws://[::1]:9000/ws', 'the server answered 502 Bad Gateway')).toBe(
      '[::1]:9000 refused the connection (HTTP 502)',
    );
    expect(disconnectText('http', 'ws://h:1/ws', 'no status here')).toBe('h:1 refused the connection (is this the agent’s WebSocket address?)');
    setLocale('ru');
    expect(disconnectText('refused', 'ws://127.0.0.1:8787/ws')).toBe('Не удаётся связаться с 127.0.0.1:8787 — соединение отклонено');
    setLocale('zh');
    expect(disconnectText('refused', 'ws://127.0.0.1:8787/ws')).toBe('无法连接 127.0.0.1:8787——连接被拒绝');
    expect(hostPort('ws://host.lan/ws')).toBe('host.lan:80');
  });
});

describe('in the app: sentences, never the raw text', () => {
  it('the banner of an agent that cannot be reached', async () => {
    const ipc = await renderApp({ profiles: [{ ...PROFILE, url: 'ws://127.0.0.1:8787/ws' }] });
    ipc.emit({ event: 'connecting', attempt: 1 });
    ipc.emit({ event: 'disconnected', code: 'refused', reason: OS, retry_in_ms: 2000 });
    expect(await screen.findByText("Can't reach 127.0.0.1:8787 — connection refused")).toBeInTheDocument();
    expect(screen.queryByText(/os error|Connection lost/)).toBeNull();
    expect(screen.getByText('Trying again in 2 s')).toBeInTheDocument();
  });

  it('an engine that cannot start (no token) says what to do', async () => {
    setupIpc({ handlers: { connect: () => Promise.reject({ code: 'no_token', message: 'no token is saved for this profile: add it in the settings' }) } });
    const backend = new TauriBackend();
    const app = new AppState(backend);
    render(App, { props: { backend, app } });
    await app.start();
    expect(await screen.findByText('No token is saved for this agent: add it in Settings.')).toBeInTheDocument();
    expect(screen.queryByText(/no token is saved for this profile/)).toBeNull();
  });

  it('a refused command: the notice and the message show the sentence, not the SQL', async () => {
    const ipc = await renderApp({
      handlers: {
        send_command: (a) => {
          const c = a.command as { cmd: string };
          if (c.cmd === 'text') throw { code: 'store_error', message: SQL };
          return {};
        },
      },
    });
    await ready(ipc);
    await fireEvent.input(composer(), { target: { value: 'hello' } });
    await fireEvent.keyDown(composer(), { key: 'Enter' });
    ipc.emit({ event: 'rejected', cmd: 'text', code: 'store_error', reason: SQL, id: null });
    const sentence = 'The message could not be saved on this computer (the local database failed).';
    await waitFor(() => expect(screen.getAllByText(sentence)).toHaveLength(2)); // the notice and the message
    expect(document.body.textContent).not.toContain('UNIQUE');
  });

  it('an engine error on a download shows the sentence, not its English detail', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'progress', id: 'd1', direction: 'down', done: 1, total: 10 });
    ipc.emit({ event: 'error', code: 'download_failed', text: 'download failed: network error: error sending request', id: null });
    expect(await screen.findByText('The file from the agent could not be downloaded.')).toBeInTheDocument();
    expect(document.body.textContent).not.toContain('error sending request');
  });

  it('the agent did not understand our frame: an update may help (unsupported_frame), in every language', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'error', code: 'unsupported_frame', text: 'unknown frame type: sticker' });
    expect(
      await screen.findByText('The agent did not understand a message from this app — an update may help.'),
    ).toBeInTheDocument();
    ipc.app.savePrefs({ locale: 'ru' });
    expect(await screen.findByText('Агент не понял сообщение от этого приложения — может помочь обновление.')).toBeInTheDocument();
    ipc.app.savePrefs({ locale: 'zh' });
    expect(await screen.findByText('智能体无法理解本应用发送的消息——更新应用可能会有帮助。')).toBeInTheDocument();
    ipc.app.savePrefs({ locale: 'en' });
  });

  it('a history that cannot be read says so in a sentence', async () => {
    await renderApp({ handlers: { history: () => Promise.reject({ code: 'store_corrupt', message: 'database disk image is malformed' }) } });
    expect(await screen.findByText(/The app’s local database is damaged/)).toBeInTheDocument();
    expect(document.body.textContent).not.toContain('malformed');
  });
});

describe('typing{on:false} ends the reply (A-11)', () => {
  it('the typing line and the avatar’s thinking end at once, without waiting for avatar{idle}', async () => {
    window.innerWidth = 1280; // wide enough for the avatar pane
    const ipc = await renderApp();
    await ready(ipc);
    const chip = () => within(screen.getByRole('complementary', { name: 'Avatar' })).getByRole('status');
    ipc.emit({ event: 'typing', on: true });
    ipc.emit({ event: 'avatar', state: 'thinking' });
    expect(await screen.findByText('Atlas is typing…')).toBeInTheDocument();
    await waitFor(() => expect(chip().textContent).toBe('Thinking…'));
    // the engine finishes the open reply, then the stop
    ipc.emit({ event: 'message', id: 'r1', text: 'partial', final: false });
    ipc.emit({ event: 'message', id: 'r1', text: 'partial answer', final: true });
    ipc.emit({ event: 'typing', on: false });
    await waitFor(() => expect(screen.queryByText('Atlas is typing…')).toBeNull());
    await waitFor(() => expect(chip().textContent).toBe('Idle'));
    expect(ipc.app.currentSession?.avatarState).toBe('idle');
    // a speaking avatar is left alone (the agent's voice, not its thinking)
    ipc.emit({ event: 'avatar', state: 'speaking' });
    ipc.emit({ event: 'typing', on: false });
    await waitFor(() => expect(chip().textContent).toBe('Speaking'));
  });
});
