// The browser demo's agent: scripted replies (streaming, cards, files, errors, a dropped connection) played on the
// fake shell's channel (./fake.ts), so that the UI can be seen and driven in a plain browser. Dev only.
import type { EngineCommand, EngineEvent, SendResult, StoredMessage } from './types';
import { appError, FakeShell, type FakeAgent } from './fake';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;

const STREAM_REPLY = `## Rolling restart plan

Here is how I would restart the **web tier** without downtime:

1. Drain one node from the load balancer
2. Restart the service and wait for \`/healthz\`
3. Put it back and move on to the next node

\`\`\`bash
for host in web-1 web-2 web-3; do
  hermes lb drain "$host" --timeout 30s
  ssh "$host" 'sudo systemctl restart app && curl -fsS localhost:8080/healthz'
  hermes lb enable "$host"
done
\`\`\`

| Node  | Status  | Uptime |
|-------|---------|--------|
| web-1 | healthy | 14 d   |
| web-2 | healthy | 14 d   |
| web-3 | degraded | 2 h   |

> web-3 restarted two hours ago — worth checking its logs first.

More in the [runbook](https://example.com/runbook).`;

function wav(seconds: number): string {
  const rate = 8000;
  const n = rate * seconds;
  const buf = new ArrayBuffer(44 + n * 2);
  const v = new DataView(buf);
  const str = (o: number, s: string) => [...s].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)));
  str(0, 'RIFF');
  v.setUint32(4, 36 + n * 2, true);
  str(8, 'WAVE');
  str(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  str(36, 'data');
  v.setUint32(40, n * 2, true);
  for (let i = 0; i < n; i++) v.setInt16(44 + i * 2, Math.sin((i / rate) * 2 * Math.PI * 330) * 3000 * Math.exp(-((i % rate) / rate) * 3), true);
  return URL.createObjectURL(new Blob([buf], { type: 'audio/wav' }));
}

function chartPng(): string {
  const c = document.createElement('canvas');
  c.width = 640;
  c.height = 400;
  const g = c.getContext('2d');
  if (!g) return '';
  const grad = g.createLinearGradient(0, 0, 640, 400);
  grad.addColorStop(0, '#eef1ff');
  grad.addColorStop(1, '#f9ecff');
  g.fillStyle = grad;
  g.fillRect(0, 0, 640, 400);
  g.fillStyle = '#1b1f2a';
  g.font = 'bold 22px sans-serif';
  g.fillText('Requests per minute', 32, 48);
  const vals = [120, 180, 160, 240, 300, 280, 350, 330, 410, 390];
  vals.forEach((val, i) => {
    const x = 40 + i * 58;
    const h = val * 0.75;
    g.fillStyle = i === vals.length - 2 ? '#c04fd8' : '#4551d8';
    g.beginPath();
    g.roundRect(x, 360 - h, 38, h, 6);
    g.fill();
  });
  return c.toDataURL('image/png');
}

/** The demo's shell: one paired demo agent (plus what `?demo=…` seeds) and the demo agent answering it. */
export function demoShell(scenario: string): FakeShell {
  const shell = new FakeShell({
    info: {
      version: '0.1.0-dev',
      dataDir: '/home/demo/.local/share/hermes-desktop',
      logDir: '/home/demo/.local/state/hermes-desktop/logs',
      keychain: { available: scenario !== 'nokeychain', detail: scenario === 'nokeychain' ? 'Secret Service is not running' : undefined },
      demo: true,
    },
    profiles: [
      {
        id: 'demo',
        name: 'Demo agent',
        url: 'ws://127.0.0.1:8787/ws',
        dialect: 'adapter',
        deviceId: 'desktop-3f9a1c2b7d4e',
        allowInsecureWs: true,
        hasToken: true,
        tokenSessionOnly: false,
        paired: true,
      },
    ],
    conversations: [
      { id: 'demo-chat', profileId: 'demo', title: 'Demo agent', session: 'mobile:desktop-3f9a1c2b7d4e', updatedAt: Date.now(), unread: 0 },
    ],
  });
  shell.agent = new DemoAgent(shell, scenario);
  return shell;
}

class DemoAgent implements FakeAgent {
  constructor(
    private shell: FakeShell,
    private scenario: string,
  ) {
    const pic = '/home/demo/Pictures/holiday-panorama.jpg';
    const pdf = '/home/demo/Documents/quarterly-report.pdf';
    shell.files.set(pic, { info: { path: pic, name: 'holiday-panorama.jpg', size: 14.6 * MiB, mime: 'image/jpeg' } });
    shell.files.set(pdf, { info: { path: pdf, name: 'quarterly-report.pdf', size: 842 * 1024, mime: 'application/pdf' } });
    shell.picks = [pic, pdf];
    if (scenario) this.seedScenario();
  }

  private get files() {
    return this.shell.files;
  }

  private id(prefix: string) {
    return `${this.shell.id(prefix)}-${Math.random().toString(36).slice(2, 7)}`;
  }

  private emit(profileId: string, ev: EngineEvent) {
    if (this.shell.reaches(profileId)) this.shell.emit(ev, profileId);
  }

  private seedScenario() {
    const t0 = Date.now() - 1000 * 60 * 60 * 26;
    const msgs: StoredMessage[] = [
      { id: 'h1', direction: 'up', text: 'Morning! Can you check why the nightly backup was slow?', final: true, state: 'delivered', createdAt: t0, attachments: [] },
      { id: 'h2', direction: 'down', text: 'The backup ran **42 minutes** instead of the usual 12: the `pg_dump` step waited on a lock held by a long `VACUUM FULL`. I rescheduled the vacuum to 03:30.', final: true, state: 'received', createdAt: t0 + 60_000, attachments: [] },
    ];
    if (this.scenario === 'stream' || this.scenario === 'narrow' || this.scenario === 'dark') {
      msgs.push({ id: 'h3', direction: 'up', text: 'How should I restart the web tier without downtime?', final: true, state: 'delivered', createdAt: Date.now() - 30_000, attachments: [] });
    }
    this.shell.stored.set('demo-chat', msgs);
  }

  connected(profileId: string): void {
    void this.runConnection(profileId);
  }

  command(pid: string, command: EngineCommand): SendResult | undefined {
    switch (command.cmd) {
      case 'text': {
        const id = command.id ?? this.id('m');
        // the engine's retry rule (A-6): an id the agent already received is refused; a new message goes instead
        if (this.received.has(id)) throw appError('id_in_use', `the id "${id}" is already used`);
        this.received.add(id);
        if (command.text.trim().split(/\s/)[0].toLowerCase() === '/error') {
          // as the adapter does: the agent's error for the message comes before the Pong that confirms delivery
          void this.ackWithError(pid, id);
          return { id };
        }
        void this.ack(pid, id).then(() => this.respond(pid, command.text.trim(), id));
        return { id };
      }
      case 'file': {
        const id = command.id ?? this.id('f');
        void this.upload(pid, id, command.path);
        return { id };
      }
      case 'prompt':
        void this.answer(pid, command.prompt_id, command.option_id, command.text);
        return {};
      case 'cancel':
        this.cancelled.add(command.id);
        return {};
      case 'reconnect':
        void this.runConnection(pid);
        return {};
      default:
        return undefined;
    }
  }

  private async runConnection(profileId: string) {
    const p = this.shell.profiles.find((x) => x.id === profileId);
    await sleep(150);
    this.emit(profileId, { event: 'connecting', attempt: 1 });
    await sleep(this.scenario === 'connecting' ? 1e9 : 350);
    if (p && p.id !== 'demo') {
      this.emit(profileId, { event: 'access_denied', reason: 'auth_failed: token does not match MOBILE_TOKEN' });
      return;
    }
    if (this.scenario === 'denied') {
      this.emit(profileId, { event: 'access_denied', reason: 'auth_failed: device desktop-3f9a1c2b7d4e is not approved' });
      return;
    }
    // as a real adapter: only the limit; the engine's features say what it accepts (A-3)
    this.emit(profileId, {
      event: 'ready',
      session: 'mobile:desktop-3f9a1c2b7d4e',
      capabilities: { max_media_bytes: 8 * MiB },
      features: { files: true, voice: true, max_file_bytes: 8 * MiB },
    });
    void this.playScenario(profileId);
  }

  private async playScenario(pid: string) {
    switch (this.scenario) {
      case 'stream':
      case 'dark':
      case 'narrow':
        await sleep(300);
        await this.streamReply(pid, STREAM_REPLY, this.scenario === 'stream' ? 6 : 1, 'h3');
        break;
      case 'approve':
        await sleep(200);
        this.approval(pid);
        break;
      case 'media':
        await sleep(200);
        await this.media(pid);
        break;
      case 'offline':
        await sleep(200);
        this.emit(pid, { event: 'disconnected', code: 'unreachable', reason: 'network unreachable', retry_in_ms: 8000 });
        break;
      case 'clarify':
        await sleep(200);
        this.clarify(pid);
        break;
    }
  }

  private cancelled = new Set<string>();
  /** Ids the demo agent has received (a Retry under one of them is refused with `id_in_use`). */
  private received = new Set<string>();

  private async ackWithError(pid: string, id: string) {
    await sleep(150);
    this.emit(pid, { event: 'sent', id });
    await sleep(200);
    this.emit(pid, { event: 'error', code: 'internal', text: 'A demo error: something went wrong on the agent side.', id });
    await sleep(100);
    this.emit(pid, { event: 'delivered', id });
  }

  private async ack(pid: string, id: string) {
    await sleep(150);
    this.emit(pid, { event: 'sent', id });
    await sleep(250);
    this.emit(pid, { event: 'delivered', id });
  }

  private async respond(pid: string, text: string, replyTo: string) {
    await sleep(250);
    const cmd = text.split(/\s/)[0].toLowerCase();
    if (cmd === '/stream') return this.streamReply(pid, STREAM_REPLY, 6, replyTo);
    if (cmd === '/approve') return this.approval(pid);
    if (cmd === '/clarify') return this.clarify(pid);
    if (cmd === '/media') return this.media(pid);
    if (cmd === '/offline') {
      this.emit(pid, { event: 'disconnected', code: 'lost', reason: 'connection reset by peer', retry_in_ms: 5000 });
      await sleep(5000);
      return this.runConnection(pid);
    }
    if (cmd === '/denied') {
      this.emit(pid, { event: 'access_denied', reason: 'auth_failed: token does not match MOBILE_TOKEN' });
      return;
    }
    // Hermes's home-channel reminder and its answer to /sethome (spec §10)
    if (cmd === '/home')
      return this.streamReply(pid, '📬 No home channel is set for Mobile. A home channel is where Hermes delivers cron job results and cross-platform messages.\n\nType /sethome to make this chat your home channel, or ignore to skip.', 200, replyTo);
    if (cmd === '/sethome')
      return this.streamReply(pid, '✅ Home channel set to **Mobile** (ID: mobile:desktop-3f9a1c2b7d4e).\nCron jobs and cross-platform messages will be delivered here.', 200, replyTo);
    const reply = `You said: *${text.replace(/[*_`]/g, '')}*\n\nI'm the built-in demo agent. Try \`/stream\`, \`/approve\`, \`/clarify\` or \`/media\`.`;
    return this.streamReply(pid, reply, 3);
  }

  private async streamReply(pid: string, text: string, chunk: number, replyTo?: string) {
    const id = this.id('r');
    this.emit(pid, { event: 'typing', on: true });
    this.emit(pid, { event: 'avatar', state: 'thinking' });
    await sleep(400);
    this.emit(pid, { event: 'avatar', state: 'speaking' });
    const step = Math.max(1, Math.ceil(text.length / (chunk === 1 ? 1 : 120)));
    for (let i = step; i < text.length; i += step) {
      this.emit(pid, { event: 'message', id, text: text.slice(0, i), final: false, reply_to: replyTo });
      await sleep(25);
    }
    this.emit(pid, { event: 'message', id, text, final: true, reply_to: replyTo });
    this.emit(pid, { event: 'typing', on: false });
    await sleep(600);
    this.emit(pid, { event: 'avatar', state: 'idle' });
  }

  private approval(pid: string) {
    this.emit(pid, {
      event: 'prompt',
      id: this.id('card'),
      kind: 'exec_approval',
      text: 'Hermes wants to run a command on **web-3**.',
      command: 'sudo systemctl restart app.service && journalctl -u app.service --since "5 min ago" --no-pager | tail -n 50',
      description: 'Restarts the application service and shows its last log lines.',
      options: [
        { id: 'approve', label: 'Approve', style: 'primary' },
        { id: 'always', label: 'Always allow', style: '' },
        { id: 'deny', label: 'Deny', style: 'danger' },
      ],
      timeout_seconds: 300,
    });
  }

  private clarify(pid: string) {
    this.emit(pid, {
      event: 'prompt',
      id: this.id('card'),
      kind: 'clarify',
      text: 'Which format should the export use?',
      options: [
        { id: 'c0', label: 'CSV', style: '' },
        { id: 'c1', label: 'JSON', style: '' },
        { id: 'other', label: '✏️ Your own answer', style: '' },
      ],
      timeout_seconds: 120,
    });
  }

  private async answer(pid: string, promptId: string, optionId?: string | null, text?: string | null) {
    await sleep(300);
    this.emit(pid, { event: 'prompt_done', prompt_id: promptId, option_id: optionId, expired: false });
    await sleep(300);
    if (optionId === 'deny') return this.streamReply(pid, 'Understood — I will not run it.', 1);
    if (optionId === 'other') return this.streamReply(pid, `Got it: **${(text ?? '').replace(/[*_`]/g, '')}**.`, 1);
    return this.streamReply(pid, 'Done. The service restarted cleanly and `/healthz` answers **200 OK**.', 2);
  }

  private async media(pid: string) {
    const img = this.id('media');
    const imgUrl = chartPng();
    this.files.set(`/downloads/${img}.png`, { info: { path: `/downloads/${img}.png`, name: 'requests.png', size: 48_213, mime: 'image/png' }, url: imgUrl });
    this.emit(pid, { event: 'progress', id: img, direction: 'down', done: 12_000, total: 48_213 });
    await sleep(400);
    this.emit(pid, { event: 'media', id: img, kind: 'image', mime: 'image/png', filename: 'requests.png', caption: 'Traffic over the last 10 minutes', path: `/downloads/${img}.png`, size: 48_213 });
    const voice = this.id('media');
    this.files.set(`/downloads/${voice}.wav`, { info: { path: `/downloads/${voice}.wav`, name: 'voice-note.wav', size: 96_044, mime: 'audio/wav' }, url: wav(6) });
    await sleep(200);
    this.emit(pid, { event: 'media', id: voice, kind: 'voice', mime: 'audio/wav', filename: 'voice-note.wav', path: `/downloads/${voice}.wav`, size: 96_044 });
    await sleep(200);
    const doc = this.id('media');
    this.emit(pid, { event: 'media', id: doc, kind: 'document', mime: 'application/pdf', filename: 'incident-report-2024-06.pdf', caption: 'Post-mortem draft', path: `/downloads/${doc}.pdf`, size: 1_284_112 });
    const dl = this.id('media');
    this.emit(pid, { event: 'progress', id: dl, direction: 'down', done: 3.1 * MiB, total: 7.4 * MiB });
  }

  private async upload(pid: string, id: string, path: string) {
    const size = this.files.get(path)?.info.size ?? 500_000;
    for (let done = 0; done <= size; done += size / 8) {
      if (this.cancelled.has(id)) return;
      this.emit(pid, { event: 'progress', id, direction: 'up', done: Math.round(done), total: size });
      await sleep(200);
    }
    this.emit(pid, { event: 'progress', id, direction: 'up', done: size, total: size });
    await this.ack(pid, id);
    await this.streamReply(pid, 'Thanks, I got the file.', 1);
  }
}

/** A browser hands the page the dropped files themselves, the shell only tokens for them: the demo keeps each dropped
 *  file under a made-up token and tells the page as the shell would (`tauri://drag-*` events for the overlay, then
 *  `files-dropped`). */
export function bridgeDomDrops(shell: FakeShell): void {
  let depth = 0;
  const at = (e: DragEvent) => ({ x: e.clientX, y: e.clientY });
  window.addEventListener('dragenter', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    if (depth++ === 0) shell.fire('tauri://drag-enter', { paths: [], position: at(e) });
  });
  window.addEventListener('dragover', (e) => e.preventDefault());
  window.addEventListener('dragleave', () => {
    if (--depth <= 0) {
      depth = 0;
      shell.fire('tauri://drag-leave', null);
    }
  });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    const paths = [...(e.dataTransfer?.files ?? [])].map((f) => {
      const path = `/dropped/${shell.id('drop')}/${f.name}`;
      shell.files.set(path, { info: { path, name: f.name, size: f.size, mime: f.type || undefined }, url: URL.createObjectURL(f) });
      return path;
    });
    shell.fire('tauri://drag-drop', { paths, position: at(e) });
    shell.fire('files-dropped', { files: paths });
  });
}
