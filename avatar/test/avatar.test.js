// Behaviour tests for the bundled avatar page (avatar.html + avatar.js) in jsdom.
// The page is loaded from the real files; avatar.js is inlined in place of its <script src> so that it runs while the
// document is still being parsed — exactly like the synchronous <script> in <head> does in a browser.
import { describe, it, expect, afterEach } from 'vitest';
import { JSDOM } from 'jsdom';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const HTML = readFileSync(join(DIR, 'avatar.html'), 'utf8');
const JS = readFileSync(join(DIR, 'avatar.js'), 'utf8');
// the code without its comments, for the static checks
const JS_CODE = JS.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1');
const CSS = readFileSync(join(DIR, 'avatar.css'), 'utf8');
const SCRIPT_TAG = '<script src="avatar.js"></script>';

const HOSTILE =
  'He said "hi" \\ \'quoted\' \\" </script><img src=x onerror=window.__xss=1>\n' +
  '<svg onload=window.__xss=2></svg> ${1+1} `tick` &amp; &lt;b&gt; \u202e 🪽✨👩‍💻\r\n\tend';

const open = [];
afterEach(() => {
  while (open.length) open.pop().window.close();
});

/**
 * Load the page. `early` is script text run right after avatar.js, before the body is parsed.
 * `reducedMotion`: emulate the prefers-reduced-motion media query (jsdom has no matchMedia of its own).
 */
async function load(opts) {
  const page = loadSync(opts);
  if (page.document.readyState === 'loading') {
    await new Promise((resolve) => page.document.addEventListener('DOMContentLoaded', resolve));
  }
  return page;
}

function loadSync({
  early = '',
  reducedMotion = null,
  url = 'http://localhost/avatar.html',
  userAgent = null,
  host = undefined,
} = {}) {
  expect(HTML.split(SCRIPT_TAG).length).toBe(2);
  const inline = `<script>${JS}</script>` + (early ? `<script>${early}</script>` : '');
  const dom = new JSDOM(HTML.replace(SCRIPT_TAG, inline), {
    url,
    runScripts: 'dangerously',
    pretendToBeVisual: true,
    beforeParse(window) {
      if (userAgent !== null) Object.defineProperty(window.navigator, 'userAgent', { value: userAgent });
      // what the app's shell hands its windows (src-tauri/src/boot.rs)
      if (host !== undefined) window.__HERMES_HOST__ = host;
      // count animation frames requested by the page (idle must not keep a loop running)
      const raf = window.requestAnimationFrame.bind(window);
      window.__frames = 0;
      window.requestAnimationFrame = (fn) => {
        window.__frames += 1;
        return raf(fn);
      };
      if (reducedMotion !== null) {
        const listeners = [];
        const mql = {
          matches: reducedMotion,
          media: '(prefers-reduced-motion: reduce)',
          addEventListener: (_t, fn) => listeners.push(fn),
          removeEventListener() {},
          addListener: (fn) => listeners.push(fn),
          removeListener() {},
        };
        window.matchMedia = (q) =>
          q.includes('prefers-reduced-motion')
            ? mql
            : { matches: false, media: q, addEventListener() {}, removeEventListener() {}, addListener() {}, removeListener() {} };
        window.__setReducedMotion = (v) => {
          mql.matches = v;
          listeners.forEach((fn) => fn({ matches: v, media: mql.media }));
        };
      }
    },
  });
  open.push(dom);
  const { window } = dom;
  const root = window.document.getElementById('hermes-avatar');
  return { dom, window, document: window.document, root, api: window.hermesAvatar };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mouthOpen = (document) => Number(document.querySelector('.mouth').getAttribute('data-open') || 0);

describe('API', () => {
  it('exists synchronously, before the document body is parsed', async () => {
    const { window } = await load({
      early: `window.__early = {
        type: typeof window.hermesAvatar,
        fns: ['setState','speak','setVolume','setSpeechLevel'].map(k => typeof window.hermesAvatar[k]),
        readyState: document.readyState,
        rootParsed: !!document.getElementById('hermes-avatar'),
      };`,
    });
    expect(window.__early).toEqual({
      type: 'object',
      fns: ['function', 'function', 'function', 'function'],
      readyState: 'loading',
      rootParsed: false,
    });
  });

  it('cannot be replaced by a later script', async () => {
    const { window, api } = await load();
    window.eval('try { window.hermesAvatar = { setState() {} } } catch (e) {}');
    expect(window.hermesAvatar).toBe(api);
    expect(Object.isFrozen(api)).toBe(true);
  });

  it('does not throw on any argument type', async () => {
    const { api } = await load();
    for (const v of [undefined, null, 0, -1, NaN, Infinity, '', 'x', {}, [], () => {}, Symbol.iterator]) {
      expect(() => api.setState(v)).not.toThrow();
      expect(() => api.setVolume(v)).not.toThrow();
      expect(() => api.setSpeechLevel(v)).not.toThrow();
      expect(() => api.speak(v)).not.toThrow();
    }
  });
});

describe('setState', () => {
  it.each(['idle', 'thinking', 'speaking', 'listening'])('puts the root in state %s', async (state) => {
    const { api, root } = await load();
    api.setState('thinking');
    api.setState(state);
    expect(root.getAttribute('data-state')).toBe(state);
    expect(root.getAttribute('data-pose')).toBe(state);
  });

  it('starts idle', async () => {
    const { root } = await load();
    expect(root.getAttribute('data-state')).toBe('idle');
  });

  it('accepts case and whitespace variants (the argument arrives JSON-decoded)', async () => {
    const { api, root } = await load();
    api.setState('  Speaking\n');
    expect(root.getAttribute('data-state')).toBe('speaking');
  });

  it.each([['dancing'], [''], [null], [undefined], [42], [{}], [['thinking']], ['__proto__'], ['constructor'], ['toString'], ['idle; alert(1)']])(
    'falls back to idle for %j',
    async (bad) => {
      const { api, root } = await load();
      api.setState('thinking');
      api.setState(bad);
      expect(root.getAttribute('data-state')).toBe('idle');
      expect(root.getAttribute('data-pose')).toBe('idle');
    },
  );

  it('moves the mouth while speaking (procedural, without setSpeechLevel) and closes it again on idle', async () => {
    const { api, document } = await load();
    api.setState('speaking');
    let max = 0;
    for (let i = 0; i < 30; i++) {
      await sleep(25);
      max = Math.max(max, mouthOpen(document));
    }
    expect(max).toBeGreaterThan(0.2);
    api.setState('idle');
    await sleep(400);
    expect(mouthOpen(document)).toBeLessThan(0.02);
  });

  it('follows setSpeechLevel while speaking', async () => {
    const { api, document } = await load();
    api.setState('speaking');
    for (let i = 0; i < 12; i++) {
      api.setSpeechLevel(0);
      await sleep(25);
    }
    expect(mouthOpen(document)).toBeLessThan(0.05);
    for (let i = 0; i < 12; i++) {
      api.setSpeechLevel(1);
      await sleep(25);
    }
    expect(mouthOpen(document)).toBeGreaterThan(0.8);
  });
});

describe('CPU', () => {
  it('stops requesting animation frames once idle and settled', async () => {
    const { api, window } = await load();
    api.setState('speaking');
    await sleep(200);
    expect(window.__frames).toBeGreaterThan(3);
    api.setState('idle');
    await sleep(700);
    const settled = window.__frames;
    await sleep(300);
    expect(window.__frames).toBe(settled);
  });

  it('rests after a while idle (the looping idle animations pause) and wakes on any call', async () => {
    const { api, root } = await load({ url: 'http://localhost/avatar.html?rest=300' });
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    api.setState('thinking');
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(450); // not idle: no rest
    expect(root.classList.contains('resting')).toBe(false);
    api.setState('idle');
    await sleep(150);
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(300);
    expect(root.classList.contains('resting')).toBe(true);
    api.setVolume(0.4); // talking to it wakes it (listening), and it rests again once idle for the delay
    await sleep(50);
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(3000);
    expect(root.classList.contains('resting')).toBe(true);
    expect(CSS).toMatch(/\.avatar\.resting \.breath,[^{]*\.avatar\.resting \.wing \{\s*animation-play-state: paused;/);
  });

  it('resting, blinks come less often and the eyes no longer glance around', async () => {
    // the idle timers 100 times faster: a blink every 22–64 ms awake, every 70–140 ms resting; glances every 60–130 ms
    const { root, window } = await load({ url: 'http://localhost/avatar.html?rest=1500&pace=0.01' });
    const seen = { blinks: 0, glances: 0 };
    new window.MutationObserver((records) => {
      for (const r of records) {
        if (r.attributeName === 'class' && root.classList.contains('blink') && !(r.oldValue ?? '').includes('blink'))
          seen.blinks++;
        if (r.attributeName === 'data-glance' && root.hasAttribute('data-glance')) seen.glances++;
      }
    }).observe(root, { attributes: true, attributeOldValue: true, attributeFilter: ['class', 'data-glance'] });
    await sleep(1200);
    const awake = { ...seen };
    expect(root.classList.contains('resting')).toBe(false);
    expect(awake.glances).toBeGreaterThan(2);
    await sleep(600); // resting from 1.5 s
    expect(root.classList.contains('resting')).toBe(true);
    seen.blinks = 0;
    seen.glances = 0;
    await sleep(1200);
    expect(seen.glances).toBe(0);
    expect(seen.blinks).toBeGreaterThan(2); // still alive
    expect(seen.blinks).toBeLessThan(awake.blinks * 0.6);
    // and a blink is shut-then-open, with no eased frames between (the stylesheet's rule for the resting eyes)
    expect(CSS).toMatch(/\.avatar\.resting \.eyes \.eye,\s*\.avatar\.resting\.blink \.eyes \.eye \{ transition: none; \}/);
  });

  it('keeps the loop running only while listening', async () => {
    const { api, window } = await load();
    api.setVolume(0.5);
    await sleep(200);
    const a = window.__frames;
    await sleep(200);
    expect(window.__frames).toBeGreaterThan(a + 3);
    await sleep(1800); // no more levels: back to idle, loop ends
    const b = window.__frames;
    await sleep(300);
    expect(window.__frames).toBe(b);
  });
});

describe('setVolume', () => {
  it.each([
    [0.5, '0.5'],
    [1.7, '1'],
    [-3, '0'],
    [NaN, '0'],
    [Infinity, '0'],
    ['0.25', '0.25'],
    ['loud', '0'],
    [null, '0'],
  ])('clamps %j to %s', async (input, expected) => {
    const { api, root } = await load();
    api.setVolume(0.9);
    api.setVolume(input);
    expect(root.style.getPropertyValue('--level')).toBe(expected);
  });

  it('opens the mouth and brightens the glow with the level (listening look, also from idle)', async () => {
    const { api, root, document } = await load();
    const glow = document.querySelector('.glow-wrap');
    const d0 = document.querySelector('.mouth').getAttribute('d');
    api.setVolume(0);
    expect(root.getAttribute('data-pose')).toBe('listening');
    expect(root.getAttribute('data-state')).toBe('idle');
    await sleep(300);
    const quietOpen = mouthOpen(document);
    const quietGlow = Number(glow.style.opacity);
    for (let i = 0; i < 10; i++) {
      api.setVolume(1);
      await sleep(30);
    }
    expect(document.querySelector('.mouth').getAttribute('d')).not.toBe(d0);
    expect(mouthOpen(document)).toBeGreaterThan(quietOpen + 0.3);
    expect(Number(glow.style.opacity)).toBeGreaterThan(quietGlow + 0.4);
  });

  it('drops the listening look when the level stops arriving', async () => {
    const { api, root } = await load();
    api.setVolume(0.6);
    expect(root.getAttribute('data-pose')).toBe('listening');
    await sleep(1400);
    expect(root.getAttribute('data-pose')).toBe('idle');
  });
});

describe('speak', () => {
  it('shows hostile text verbatim, as text only, creating no elements and running nothing', async () => {
    const { api, window, document, root } = await load();
    const before = document.getElementsByTagName('*').length;
    api.speak(HOSTILE);
    const text = document.querySelector('.bubble-text');
    expect(text.textContent).toBe(HOSTILE);
    expect(text.childNodes.length).toBe(1);
    expect(text.firstChild.nodeType).toBe(window.Node.TEXT_NODE);
    expect(document.getElementsByTagName('*').length).toBe(before);
    expect(document.querySelector('img')).toBeNull();
    expect(text.innerHTML).toContain('&lt;/script&gt;&lt;img src=x onerror=window.__xss=1&gt;');
    expect(root.classList.contains('has-bubble')).toBe(true);
    await sleep(50);
    expect(window.__xss).toBeUndefined();
  });

  it('replaces the previous line and hides the bubble for empty text', async () => {
    const { api, document, root } = await load();
    api.speak('first');
    api.speak('second');
    expect(document.querySelector('.bubble-text').textContent).toBe('second');
    api.speak('   ');
    expect(root.classList.contains('has-bubble')).toBe(false);
  });

  it('keeps the bubble while speaking, then fades it a little after the app says idle', async () => {
    const { api, root } = await load();
    api.setState('speaking');
    api.speak('Hi!');
    await sleep(3800); // past the minimum reading time (3.5 s)
    expect(root.classList.contains('has-bubble')).toBe(true);
    api.setState('idle');
    await sleep(1500);
    expect(root.classList.contains('has-bubble')).toBe(true);
    await sleep(1200);
    expect(root.classList.contains('has-bubble')).toBe(false);
  }, 10000);

  it('cuts very long lines with an ellipsis', async () => {
    const { api, document } = await load();
    api.speak('a'.repeat(10000));
    const t = document.querySelector('.bubble-text').textContent;
    expect(t.length).toBe(600);
    expect(t.endsWith('\u2026')).toBe(true);
    // words are not cut in half when a space is near the limit
    api.speak('word '.repeat(2000));
    const w = document.querySelector('.bubble-text').textContent;
    expect(w.length).toBeLessThanOrEqual(600);
    expect(w.length).toBeGreaterThan(540);
    expect(w).toMatch(/word\u2026$/);
  });

  it('moves the mouth while the line is "spoken", even if the app never said speaking', async () => {
    const { api, root, document } = await load();
    api.speak('Hello there, this is a line of about sixty characters long.');
    expect(root.getAttribute('data-state')).toBe('idle');
    expect(root.getAttribute('data-pose')).toBe('speaking');
    let max = 0;
    for (let i = 0; i < 30; i++) {
      await sleep(25);
      max = Math.max(max, mouthOpen(document));
    }
    expect(max).toBeGreaterThan(0.2);
    api.setState('idle'); // the app ends it explicitly
    expect(root.getAttribute('data-pose')).toBe('idle');
  });
});

describe('loading order', () => {
  it('applies calls made before DOMContentLoaded', async () => {
    const { root, document, window } = await load({
      early: `window.hermesAvatar.setState("thinking");
              window.hermesAvatar.speak("early </b>bird");
              window.hermesAvatar.setVolume(3);
              window.__stateAtCall = document.readyState;`,
    });
    expect(window.__stateAtCall).toBe('loading');
    expect(root.getAttribute('data-state')).toBe('thinking');
    expect(document.querySelector('.bubble-text').textContent).toBe('early </b>bird');
    expect(root.classList.contains('has-bubble')).toBe(true);
    expect(root.style.getPropertyValue('--level')).toBe('1');
  });

  it('the state of a later call wins over an earlier one', async () => {
    const { root } = await load({ early: `hermesAvatar.setState("speaking"); hermesAvatar.setState("nonsense");` });
    expect(root.getAttribute('data-state')).toBe('idle');
  });
});

describe('reduced motion', () => {
  it('adds the reduced-motion class when the system asks for it', async () => {
    const { root } = await load({ reducedMotion: true });
    expect(root.classList.contains('reduced-motion')).toBe(true);
  });

  it('does not add it otherwise, and follows changes of the preference', async () => {
    const { root, window } = await load({ reducedMotion: false });
    expect(root.classList.contains('reduced-motion')).toBe(false);
    window.__setReducedMotion(true);
    expect(root.classList.contains('reduced-motion')).toBe(true);
    window.__setReducedMotion(false);
    expect(root.classList.contains('reduced-motion')).toBe(false);
  });

  it('can be forced with ?motion=reduce', async () => {
    const { root } = await load({ reducedMotion: false, url: 'http://localhost/avatar.html?motion=reduce' });
    expect(root.classList.contains('reduced-motion')).toBe(true);
  });

  it('still shows states as static poses: speaking opens the mouth without movement', async () => {
    const { api, document } = await load({ reducedMotion: true });
    api.setState('speaking');
    await sleep(100);
    const a = mouthOpen(document);
    await sleep(150);
    expect(a).toBeGreaterThan(0.2);
    expect(mouthOpen(document)).toBe(a);
  });

  it('the CSS stops keyframe animations under the class and the media query', async () => {
    expect(CSS).toMatch(/\.avatar\.reduced-motion \*[^{]*\{[^}]*animation: none !important/);
    expect(CSS).toMatch(/@media \(prefers-reduced-motion: reduce\)\s*\{[^}]*animation: none !important/);
  });
});

describe('platform', () => {
  it('marks Linux so the CSS uses the desktop font instead of a long cross-platform stack', async () => {
    const gtk = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
    const mac = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)';
    expect((await load({ userAgent: gtk })).root.getAttribute('data-platform')).toBe('linux');
    expect((await load({ userAgent: mac })).root.hasAttribute('data-platform')).toBe(false);
    expect(CSS).toMatch(/\.avatar\[data-platform="linux"\]\s*\{\s*font-family: system-ui, sans-serif;/);
  });

  it("leaves system-ui out where the app's shell found its font missing (its own window or the app's frame)", async () => {
    const gtk = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';
    const own = await load({ userAgent: gtk, host: { uiFontMissing: true } });
    expect(own.root.getAttribute('data-ui-font')).toBe('missing');
    expect((await load({ userAgent: gtk, host: { uiFontMissing: false } })).root.hasAttribute('data-ui-font')).toBe(false);
    expect((await load({ userAgent: gtk, host: { uiFontMissing: 'yes' } })).root.hasAttribute('data-ui-font')).toBe(false);
    expect((await load({ userAgent: gtk })).root.hasAttribute('data-ui-font')).toBe(false);
    expect(CSS).toMatch(/\.avatar\[data-platform="linux"\]\[data-ui-font="missing"\]\s*\{\s*font-family: sans-serif;/);
  });
});

describe('theme', () => {
  it('follows ?theme=dark|light and ignores anything else', async () => {
    expect((await load({ url: 'http://localhost/avatar.html?theme=dark' })).root.getAttribute('data-theme')).toBe('dark');
    expect((await load({ url: 'http://localhost/avatar.html?theme=light' })).root.getAttribute('data-theme')).toBe('light');
    expect((await load({ url: 'http://localhost/avatar.html?theme=%22%3E%3Cb%3E' })).root.hasAttribute('data-theme')).toBe(false);
  });
});

describe('CSP readiness (default-src self; script-src self; style-src self)', () => {
  it('the HTML has no inline scripts, styles, style attributes or event handlers', async () => {
    const doc = new JSDOM(HTML).window.document;
    const scripts = [...doc.querySelectorAll('script')];
    expect(scripts.map((s) => s.getAttribute('src'))).toEqual(['avatar.js']);
    expect(scripts.every((s) => s.textContent.trim() === '')).toBe(true);
    expect(doc.querySelectorAll('style').length).toBe(0);
    expect(doc.querySelectorAll('[style]').length).toBe(0);
    const handlers = [...doc.querySelectorAll('*')].flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)));
    expect(handlers).toEqual([]);
    expect([...doc.querySelectorAll('link')].map((l) => l.getAttribute('href'))).toEqual(['data:,', 'avatar.css']);
  });

  it('nothing refers to the network', async () => {
    for (const src of [HTML, CSS, JS]) {
      expect(src).not.toMatch(/https?:\/\//);
      expect(src).not.toMatch(/@import|url\((?!#)/);
    }
    expect(JS_CODE).not.toMatch(/\bfetch\(|XMLHttpRequest|WebSocket|EventSource|sendBeacon/);
  });

  it('the script uses no HTML parsing or eval', async () => {
    expect(JS_CODE).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(['"]style/);
    expect(JS_CODE).not.toMatch(/setTimeout\(\s*['"]/);
  });
});
