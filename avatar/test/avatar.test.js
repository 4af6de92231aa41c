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
const CSS_CODE = CSS.replace(/\/\*[\s\S]*?\*\//g, '');
const SCRIPT_TAG = '<script src="avatar.js"></script>';
const CSS_TAG = '<link rel="stylesheet" href="avatar.css">';
const STATES = ['idle', 'thinking', 'speaking', 'listening', 'waiting', 'error', 'tool'];
const LOOKS = ['lilac', 'mint', 'sunset', 'ocean', 'graphite'];

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
 * `css`: inline avatar.css in place of its <link> (jsdom loads no stylesheets), for getComputedStyle.
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
  css = false,
} = {}) {
  expect(HTML.split(SCRIPT_TAG).length).toBe(2);
  expect(HTML.split(CSS_TAG).length).toBe(2);
  const inline = `<script>${JS}</script>` + (early ? `<script>${early}</script>` : '');
  let html = HTML.replace(SCRIPT_TAG, () => inline);
  if (css) html = html.replace(CSS_TAG, () => `<style>${CSS}</style>`);
  const dom = new JSDOM(html, {
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
        fns: ['setState','speak','setVolume','setSpeechLevel','setLook'].map(k => typeof window.hermesAvatar[k]),
        readyState: document.readyState,
        rootParsed: !!document.getElementById('hermes-avatar'),
      };`,
    });
    expect(window.__early).toEqual({
      type: 'object',
      fns: ['function', 'function', 'function', 'function', 'function'],
      readyState: 'loading',
      rootParsed: false,
    });
  });

  it('cannot be replaced by a later script', async () => {
    const { window, api } = await load();
    window.eval('try { window.hermesAvatar = { setState() {} } } catch (e) {}');
    expect(window.hermesAvatar).toBe(api);
    expect(Object.isFrozen(api)).toBe(true);
    expect(Object.keys(api).sort()).toEqual(['setImage', 'setLook', 'setSpeechLevel', 'setState', 'setVolume', 'speak']);
    window.eval('try { window.hermesAvatar.setLook = function () {} } catch (e) {}');
    window.eval('try { delete window.hermesAvatar.setLook } catch (e) {}');
    expect(typeof api.setLook).toBe('function');
    api.setLook('mint'); // still the page's own
    expect(window.document.documentElement.getAttribute('data-look')).toBe('mint');
  });

  it('does not throw on any argument type', async () => {
    const { api } = await load();
    for (const v of [undefined, null, 0, -1, NaN, Infinity, '', 'x', {}, [], () => {}, Symbol.iterator]) {
      expect(() => api.setState(v)).not.toThrow();
      expect(() => api.setVolume(v)).not.toThrow();
      expect(() => api.setSpeechLevel(v)).not.toThrow();
      expect(() => api.speak(v)).not.toThrow();
      expect(() => api.setLook(v)).not.toThrow();
    }
  });

  it('does not throw on hostile arguments either (throwing objects, huge strings, markup)', async () => {
    const { api, root, window } = await load();
    const trap = new Proxy({}, { get() { throw new Error('trap'); } });
    const evil = { toString() { throw new Error('toString'); }, valueOf() { throw new Error('valueOf'); } };
    const huge = 'mint '.repeat(200000);
    const hostile = [trap, evil, huge, '</script><script>window.__xss=1</script>', HOSTILE, '\u0000', -0, 1e308, [1, 2], new Date(0)];
    for (const v of hostile) {
      for (const m of ['setState', 'speak', 'setVolume', 'setSpeechLevel', 'setLook']) {
        expect(() => api[m](v), `${m}(${typeof v})`).not.toThrow();
      }
    }
    await sleep(30);
    expect(window.__xss).toBeUndefined();
    expect(root.getAttribute('data-look')).toBe('lilac');
    expect(STATES).toContain(root.getAttribute('data-state'));
  });
});

describe('setState', () => {
  it.each(STATES)('puts the root in state %s', async (state) => {
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

  it('holds every loop still under the class the app sets on its root while nobody looks (ui: UNWATCHED_CLASS)', () => {
    // the app never pauses the page's animations through script (that would override the page's own rest)
    expect(CSS).toMatch(/html\.hermes-unwatched \*,[^{]*\{\s*animation-play-state: paused !important;/);
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

// the y of the first control point of the mouth's upper lip: below the corners (> 152) for a smile, above for a frown
const mouthCurve = (document) => Number(document.querySelector('.mouth').getAttribute('d').match(/-?\d+(?:\.\d+)?/g)[3]);

describe('states: waiting, error, tool', () => {
  it.each([['waiting'], ['error'], ['tool']])('%s: is its own state and pose, and ends when the app says idle', async (state) => {
    const { api, root } = await load();
    api.setState(state);
    expect(root.getAttribute('data-state')).toBe(state);
    expect(root.getAttribute('data-pose')).toBe(state);
    api.setState('idle');
    expect(root.getAttribute('data-pose')).toBe('idle');
  });

  it.each([['  Waiting '], ['ERROR'], ['\tTool\n']])('accepts %j (trimmed, lower-cased)', async (name) => {
    const { api, root } = await load();
    api.setState(name);
    expect(root.getAttribute('data-state')).toBe(name.trim().toLowerCase());
  });

  it.each([['wait'], ['errors'], ['tools'], ['tool running'], ['warning'], ['busy']])('near misses like %j are idle', async (name) => {
    const { api, root } = await load();
    api.setState('tool');
    api.setState(name);
    expect(root.getAttribute('data-state')).toBe('idle');
  });

  it('waiting: setVolume gives the listening look (the user may answer by voice), and the card comes back', async () => {
    const { api, root } = await load();
    api.setState('waiting');
    api.setVolume(0.5);
    expect(root.getAttribute('data-state')).toBe('waiting');
    expect(root.getAttribute('data-pose')).toBe('listening');
    await sleep(1400); // the level stops arriving
    expect(root.getAttribute('data-pose')).toBe('waiting');
  });

  it.each([['error'], ['tool'], ['thinking']])('%s: setVolume does not change the look (the agent is busy or in trouble)', async (state) => {
    const { api, root } = await load();
    api.setState(state);
    api.setVolume(0.8);
    expect(root.getAttribute('data-pose')).toBe(state);
  });

  it.each([['waiting'], ['tool']])('%s: a line being said shows the speaking look, then the state again', async (state) => {
    const { api, root } = await load();
    api.setState(state);
    api.speak('Hi!'); // "said" in 0.9 s
    expect(root.getAttribute('data-state')).toBe(state);
    expect(root.getAttribute('data-pose')).toBe('speaking');
    await sleep(1100);
    expect(root.getAttribute('data-pose')).toBe(state);
    expect(root.classList.contains('has-bubble')).toBe(true); // the line stays up for its reading time
  });

  it('error: a line is shown in the bubble but the worried face stays (no cheerful talking pose)', async () => {
    const { api, root, document } = await load();
    api.setState('error');
    api.speak('I lost the connection to the agent.');
    expect(root.getAttribute('data-pose')).toBe('error');
    expect(document.querySelector('.bubble-text').textContent).toBe('I lost the connection to the agent.');
    expect(root.classList.contains('has-bubble')).toBe(true);
  });

  it('setState moves between any two states directly (the last call wins)', async () => {
    const { api, root } = await load();
    for (const [from, to] of [['waiting', 'error'], ['error', 'tool'], ['tool', 'waiting'], ['waiting', 'speaking']]) {
      api.setState(from);
      api.setState(to);
      expect(root.getAttribute('data-pose')).toBe(to);
    }
  });

  it('the mouth: a smile while waiting, a frown in error, a short line pulled aside at work', async () => {
    const { api, document } = await load();
    api.setState('waiting');
    await sleep(700);
    expect(mouthCurve(document)).toBeGreaterThan(153);
    api.setState('error');
    await sleep(700);
    expect(mouthCurve(document)).toBeLessThan(151);
    expect(mouthOpen(document)).toBeLessThan(0.02);
    api.setState('tool');
    await sleep(900);
    const d = document.querySelector('.mouth').getAttribute('d');
    const xs = d.match(/-?\d+(?:\.\d+)?/g).map(Number);
    expect((xs[0] + xs[6]) / 2).toBeLessThan(99); // the corners' middle is left of the face's centre (x = 100)
  });

  it('the glow settles to a steady level and the frame loop stops: the waiting pulse and the gears are CSS', async () => {
    for (const state of ['waiting', 'error', 'tool']) {
      const { api, window, document } = await load();
      api.setState(state);
      await sleep(1500);
      const glow = Number(document.querySelector('.glow-wrap').style.opacity);
      expect(glow, state).toBeGreaterThan(0.15);
      const settled = window.__frames;
      await sleep(300);
      expect(window.__frames, state).toBe(settled);
    }
    expect(CSS).toMatch(/\.avatar\[data-pose="waiting"\] \{ --glow: var\(--glow-wait\); \}/);
    expect(CSS).toMatch(/\.avatar\[data-pose="error"\] \{ --glow: var\(--glow-error\); \}/);
    expect(CSS).toMatch(/\.avatar\[data-pose="tool"\] \{ --glow: var\(--glow-tool\); \}/);
    expect(CSS).toMatch(/\.avatar\[data-pose="waiting"\] \.glow \{ animation: av-pulse/);
    expect(CSS).toMatch(/\.avatar\[data-pose="tool"\] \.gear-big \{ animation: av-spin /);
  });

  it('has the props of each pose in the page: the card, the gears, the drop of sweat', async () => {
    const { document } = await load();
    expect(document.querySelector('.arm-r .card .card-face')).not.toBeNull(); // the card rides with the paw
    expect(document.querySelectorAll('.gears .gear').length).toBe(2);
    expect(document.querySelector('.face .sweat')).not.toBeNull();
    expect(CSS).toMatch(/\.avatar\[data-pose="waiting"\] \.card \{ opacity: 1;/);
    expect(CSS).toMatch(/\.avatar\[data-pose="tool"\] \.gears \{ opacity: 1; \}/);
    expect(CSS).toMatch(/\.avatar\[data-pose="error"\] \.sweat \{ opacity: 0\.9; \}/);
    expect(CSS).toMatch(/\.avatar\[data-pose="error"\] \.wing \{ --lift: -\d+deg;/); // droopy wings
  });

  it('waiting and error rest after a while like idle (their loops hold still); tool does not', async () => {
    const { api, root } = await load({ url: 'http://localhost/avatar.html?rest=300' });
    api.setState('waiting');
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    api.setState('error'); // any call wakes
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    api.setState('tool');
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(false);
    // the waiting pose's own loops are paused by the same rule as the idle ones
    expect(CSS).toMatch(/\.avatar\.resting \.breath,[^{]*\.avatar\.resting \.glow,[^{]*\.avatar\.resting \.card-sway,[^{]*\{\s*animation-play-state: paused;/);
  });

  it('waiting rests also after a listening spell, but not while the level is still arriving', async () => {
    const { api, root } = await load({ url: 'http://localhost/avatar.html?rest=300' });
    api.setState('waiting');
    api.setVolume(0.3);
    await sleep(450);
    expect(root.getAttribute('data-pose')).toBe('listening');
    expect(root.classList.contains('resting')).toBe(false);
    await sleep(1100); // the listening look ends at 1.2 s; rests 0.3 s later
    expect(root.getAttribute('data-pose')).toBe('waiting');
    await sleep(350);
    expect(root.classList.contains('resting')).toBe(true);
  });

  describe('with reduced motion', () => {
    it.each([['waiting'], ['error'], ['tool']])('%s: the pose shows, static (the mouth holds still, no frames run)', async (state) => {
      const { api, root, window, document } = await load({ reducedMotion: true });
      api.setState(state);
      expect(root.classList.contains('reduced-motion')).toBe(true);
      expect(root.getAttribute('data-pose')).toBe(state);
      await sleep(100);
      const d = document.querySelector('.mouth').getAttribute('d'); // jumps to the pose: no tweening
      await sleep(1200); // the glow still fades in (opacity), then the loop ends
      expect(document.querySelector('.mouth').getAttribute('d')).toBe(d);
      const frames = window.__frames;
      await sleep(300);
      expect(document.querySelector('.mouth').getAttribute('d')).toBe(d);
      expect(window.__frames).toBe(frames);
    });

    it('the loops of the new poses are keyframe animations that the reduced-motion rules switch off, over static poses', () => {
      // every animation of the new poses is on a descendant of .avatar, which `.avatar.reduced-motion *` and the
      // media query set to `animation: none !important` (checked in 'reduced motion' above)
      for (const name of ['av-pulse', 'av-card', 'av-spin', 'av-spin-back', 'av-work-l', 'av-work-r']) {
        expect(CSS).toMatch(new RegExp(`@keyframes ${name} \\{`));
        const uses = CSS_CODE.match(new RegExp(`[^}]*\\{[^}]*animation: ${name} [^}]*\\}`, 'g')) || [];
        expect(uses.length, name).toBeGreaterThan(0);
        for (const rule of uses) expect(rule.trim(), name).toMatch(/^\.avatar\[data-pose="(waiting|tool)"\] \./);
      }
      // the busy paws have a static transform to fall back to
      expect(CSS).toMatch(/\.avatar\[data-pose="tool"\] \.arm-l \{\s*transform: translate/);
      expect(CSS).toMatch(/\.avatar\[data-pose="tool"\] \.arm-r \{\s*transform: translate/);
    });
  });
});

describe('setLook', () => {
  const lk = (window, el, name = '--lk-body') => window.getComputedStyle(el).getPropertyValue(name).trim();

  it('starts as lilac, on the root and on <html>', async () => {
    const { root, document } = await load();
    expect(root.getAttribute('data-look')).toBe('lilac');
    expect(document.documentElement.getAttribute('data-look')).toBe('lilac');
  });

  it.each(LOOKS)('sets data-look=%s and its palette (custom properties the SVG paints with)', async (look) => {
    const { api, root, window, document } = await load({ css: true });
    const lilac = { body: lk(window, root), gold: lk(window, root, '--lk-gold'), dark: lk(window, root, '--lk-body-dk') };
    expect(lilac.body).toBe('#9686f7'); // today's colours
    api.setLook(look);
    expect(root.getAttribute('data-look')).toBe(look);
    expect(document.documentElement.getAttribute('data-look')).toBe(look);
    const mine = { body: lk(window, root), gold: lk(window, root, '--lk-gold'), dark: lk(window, root, '--lk-body-dk') };
    for (const v of Object.values(mine)) expect(v).toMatch(/^#[0-9a-f]{6}$/);
    if (look === 'lilac') expect(mine).toEqual(lilac);
    else {
      expect(mine.body).not.toBe(lilac.body);
      expect(mine.dark).not.toBe(lilac.dark);
    }
  });

  it('every look defines the whole palette, for light and dark', () => {
    const block = (sel) => CSS.slice(CSS.indexOf(sel)).split('}')[0];
    const names = [...block(':root,\n[data-look="lilac"] {').matchAll(/(--lk-[a-z-]+):/g)].map((m) => m[1]);
    expect(names).toContain('--lk-body');
    expect(names).toContain('--lk-body-dk');
    for (const look of LOOKS.slice(1)) {
      const mine = [...block(`[data-look="${look}"] {`).matchAll(/(--lk-[a-z-]+):/g)].map((m) => m[1]);
      expect(mine, look).toEqual(names);
    }
    // the paints read the look through the theme's variables, and the dark theme picks the look's dark set
    expect(CSS).toMatch(/\.avatar \{[^}]*--body: var\(--lk-body\);/);
    expect(CSS).toMatch(/\.avatar\[data-theme="dark"\] \{[^}]*--body: var\(--lk-body-dk\);/);
    expect(CSS).toMatch(/\.avatar:not\(\[data-theme="light"\]\) \{[^}]*--body: var\(--lk-body-dk\);/);
    expect(CSS).toMatch(/\.c-body \{ stop-color: var\(--body\); \}/);
  });

  it('accepts case and whitespace variants', async () => {
    const { api, root } = await load();
    api.setLook('  Ocean\n');
    expect(root.getAttribute('data-look')).toBe('ocean');
  });

  it.each([
    ['neon'], [''], [' '], [null], [undefined], [42], [NaN], [{}], [[]], [['mint']], [{ toString: () => 'mint' }],
    ['__proto__'], ['constructor'], ['toString'], ['mint; color: red'], ['</script><b>x</b>'], ['mint'.repeat(50000)],
  ])('falls back to lilac for %j', async (bad) => {
    const { api, root, document } = await load();
    api.setLook('sunset');
    expect(() => api.setLook(bad)).not.toThrow();
    expect(root.getAttribute('data-look')).toBe('lilac');
    expect(document.documentElement.getAttribute('data-look')).toBe('lilac');
  });

  it('does not change the state or pose', async () => {
    const { api, root } = await load();
    api.setState('tool');
    api.setLook('mint');
    expect(root.getAttribute('data-state')).toBe('tool');
    expect(root.getAttribute('data-pose')).toBe('tool');
  });

  it('wakes a resting avatar, like any call', async () => {
    const { api, root } = await load({ url: 'http://localhost/avatar.html?rest=300' });
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    api.setLook('graphite');
    expect(root.classList.contains('resting')).toBe(false);
  });

  it('takes ?look= from the page URL, on <html> before the body is parsed (the first paint)', async () => {
    const { root, window, document } = await load({
      url: 'http://localhost/avatar.html?look=mint',
      css: true,
      early: `window.__early = document.documentElement.getAttribute('data-look') + ' ' + document.readyState;`,
    });
    expect(window.__early).toBe('mint loading');
    expect(root.getAttribute('data-look')).toBe('mint');
    expect(lk(window, root)).toBe('#5ccba4');
    expect(lk(window, document.documentElement)).toBe('#5ccba4'); // the palette is on <html> from the start
  });

  it.each([
    ['?look=OCEAN', 'ocean'],
    ['?theme=dark&look=graphite', 'graphite'],
    ['?look=', 'lilac'],
    ['?look=nope', 'lilac'],
    ['?look=%3C%2Fscript%3E', 'lilac'],
    ['?look=mint&look=sunset', 'mint'],
  ])('%s → %s', async (query, expected) => {
    const { root } = await load({ url: `http://localhost/avatar.html${query}` });
    expect(root.getAttribute('data-look')).toBe(expected);
  });

  it('a setLook() call wins over the query, before and after the page is parsed', async () => {
    const before = await load({ url: 'http://localhost/avatar.html?look=mint', early: `hermesAvatar.setLook('sunset');` });
    expect(before.root.getAttribute('data-look')).toBe('sunset');
    const after = await load({ url: 'http://localhost/avatar.html?look=mint' });
    after.api.setLook('ocean');
    expect(after.root.getAttribute('data-look')).toBe('ocean');
    after.api.setLook('nonsense'); // garbage is lilac, not the query's look
    expect(after.root.getAttribute('data-look')).toBe('lilac');
  });

  it('is remembered when called before DOMContentLoaded (the last call wins), with the other early calls', async () => {
    const { root, window } = await load({
      early: `hermesAvatar.setLook('mint'); hermesAvatar.setState('waiting'); hermesAvatar.setLook('Graphite');
              window.__stateAtCall = document.readyState;`,
    });
    expect(window.__stateAtCall).toBe('loading');
    expect(root.getAttribute('data-look')).toBe('graphite');
    expect(root.getAttribute('data-state')).toBe('waiting');
    expect(root.getAttribute('data-pose')).toBe('waiting');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// setImage: a picture the user picked, shown instead of Pip

// tiny real images (1×1) of the four accepted kinds
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const JPEG =
  'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////' +
  '////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=';
const WEBP = 'data:image/webp;base64,UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=';
const GIF = 'data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const b64 = (text) => Buffer.from(text, 'utf8').toString('base64');
const SVG_TEXT = '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__xss=3"><circle r="9"/></svg>';
const MAX_IMAGE = 4 * 1024 * 1024;
// a PNG's signature followed by filler: valid base64 of exactly `length` characters in all
const pngOfLength = (length) => {
  const head = 'data:image/png;base64,iVBORw0KGgoAAAAN';
  return head + 'A'.repeat(length - head.length);
};

const imageOf = (document) => document.querySelector('.picture-img');
const openOf = (root) => Number(root.style.getPropertyValue('--open') || 0);
const ringOf = (document) => Number(document.querySelector('.picture-ring-wrap').style.opacity || 0);
const ringScaleOf = (document) =>
  Number((document.querySelector('.picture-ring-wrap').style.transform.match(/scale\(([\d.]+)\)/) || [0, 1])[1]);
// the vertical stretch of the picture (1 when it is not stretched)
const stretchOf = (document) => {
  const t = document.querySelector('.picture-talk').style.transform;
  const m = t.match(/scale\(([\d.]+), ([\d.]+)\)/);
  return m ? Number(m[2]) : 1;
};
const hopOf = (document) => {
  const m = document.querySelector('.picture-talk').style.transform.match(/translate\(0px, (-?[\d.]+)px\)/);
  return m ? Number(m[1]) : 0;
};
const shown = (window, el) => window.getComputedStyle(el).display !== 'none';

describe('setImage', () => {
  it('exists before the body is parsed, and nothing is shown before a call', async () => {
    const { window, root, document } = await load({ early: `window.__early = typeof window.hermesAvatar.setImage;` });
    expect(window.__early).toBe('function');
    expect(root.hasAttribute('data-image')).toBe(false);
    expect(imageOf(document).hasAttribute('href')).toBe(false);
  });

  it.each([
    ['png', PNG],
    ['jpeg', JPEG],
    ['webp', WEBP],
    ['gif', GIF],
    ['upper-case type', PNG.replace('data:image/png', 'DATA:IMAGE/PNG')],
  ])('shows a %s picture instead of Pip: data-image="1", the <image> gets the URL', async (_kind, url) => {
    const { api, root, document, window } = await load({ css: true });
    expect(shown(window, document.querySelector('.character'))).toBe(true);
    expect(shown(window, document.querySelector('.picture'))).toBe(false);
    expect(api.setImage(url)).toBe(true);
    expect(root.getAttribute('data-image')).toBe('1');
    expect(imageOf(document).getAttribute('href')).toBe(url);
    expect(shown(window, document.querySelector('.character'))).toBe(false);
    expect(shown(window, document.querySelector('.picture'))).toBe(true);
  });

  it('the picture is round, covers its circle, sits where Pip is and is decorative', async () => {
    const { document } = await load();
    const img = imageOf(document);
    expect(img.namespaceURI).toBe('http://www.w3.org/2000/svg');
    expect(img.getAttribute('preserveAspectRatio')).toBe('xMidYMid slice'); // object-fit: cover
    expect(img.getAttribute('clip-path')).toBe('url(#av-picture-clip)');
    const clip = document.querySelector('#av-picture-clip circle');
    expect([clip.getAttribute('cx'), clip.getAttribute('cy'), clip.getAttribute('r')]).toEqual(['100', '132', '70']);
    // the square of the image is the clip circle's bounding box: centred on Pip's body (x 31..169, y 58..205)
    expect(Number(img.getAttribute('x')) + Number(img.getAttribute('width')) / 2).toBe(100);
    expect(Number(img.getAttribute('y')) + Number(img.getAttribute('height')) / 2).toBe(132);
    expect(Number(img.getAttribute('width'))).toBe(140);
    expect(img.closest('svg').getAttribute('aria-hidden')).toBe('true'); // no text alternative of its own
    expect(document.querySelector('.stage').getAttribute('aria-label')).toBe('Hermes, your agent');
    expect(document.querySelector('img')).toBeNull();
  });

  it.each([
    ['an http URL', 'http://example.com/me.png'],
    ['an https URL', 'https://example.com/me.png'],
    ['a protocol-relative URL', '//example.com/me.png'],
    ['a relative path', 'me.png'],
    ['a file URL', 'file:///home/me/me.png'],
    ['javascript:', 'javascript:window.__xss=1'],
    ['a blob URL', 'blob:http://localhost/0b7c'],
    ['an SVG data URL (base64)', 'data:image/svg+xml;base64,' + b64(SVG_TEXT)],
    ['an SVG data URL (text)', 'data:image/svg+xml,' + encodeURIComponent(SVG_TEXT)],
    ['an SVG labelled as PNG', 'data:image/png;base64,' + b64(SVG_TEXT)],
    ['text labelled as GIF', 'data:image/gif;base64,' + b64('hello, this is not a picture at all')],
    ['HTML', 'data:text/html;base64,' + b64('<script>window.__xss=4</script>')],
    ['a BMP', 'data:image/bmp;base64,Qk06AAAAAAAAADYAAAAoAAAAAQAAAAEAAAABABgAAAAAAAQAAAA='],
    ['a PNG without base64', 'data:image/png,' + encodeURIComponent('\x89PNG\r\n\x1a\n')],
    ['a PNG with a parameter', PNG.replace(';base64', ';charset=utf-8;base64')],
    ['a PNG with broken base64', PNG.replace('iVBORw0KGgo', 'iVBORw0KGgo"><b>')],
    ['a PNG with a space', PNG.replace('AAAAN', 'AAAA N')],
    ['a PNG after blanks', ' ' + PNG],
    ['a PNG signature only', 'data:image/png;base64,iVBORw0K'],
    ['no data at all', 'data:image/png;base64,'],
    ['more than 4 MiB of text', pngOfLength(MAX_IMAGE + 1)],
  ])('refuses %s and keeps the current picture (or Pip)', async (_what, bad) => {
    const { api, root, document, window } = await load();
    expect(api.setImage(bad)).toBe(false);
    expect(root.hasAttribute('data-image')).toBe(false);
    expect(imageOf(document).hasAttribute('href')).toBe(false);
    api.setImage(GIF);
    expect(() => api.setImage(bad)).not.toThrow();
    expect(api.setImage(bad)).toBe(false);
    expect(root.getAttribute('data-image')).toBe('1');
    expect(imageOf(document).getAttribute('href')).toBe(GIF);
    await sleep(30);
    expect(window.__xss).toBeUndefined();
  });

  it('takes up to 4 MiB of text (4 194 304 characters), not one more', async () => {
    const { api, root, document } = await load();
    const limit = pngOfLength(MAX_IMAGE);
    expect(api.setImage(limit)).toBe(true);
    expect(imageOf(document).getAttribute('href')).toBe(limit);
    expect(api.setImage(pngOfLength(MAX_IMAGE + 1))).toBe(false);
    expect(imageOf(document).getAttribute('href')).toBe(limit);
    expect(api.setImage(' '.repeat(MAX_IMAGE + 1))).toBe(false); // even blanks: too long is refused first
    expect(root.getAttribute('data-image')).toBe('1');
  });

  it.each([
    ['a number', 42],
    ['true', true],
    ['undefined', undefined],
    ['NaN', NaN],
    ['an object', {}],
    ['an array holding a URL', [PNG]],
    ['an object whose toString is a URL', { toString: () => PNG }],
    ['a String object', new String(PNG)], // eslint-disable-line no-new-wrappers
    ['a function', () => PNG],
    ['a symbol', Symbol.iterator],
    ['a throwing proxy', new Proxy({}, { get() { throw new Error('trap'); } })],
  ])('refuses %s without coercing it, and does not throw', async (_what, bad) => {
    const { api, root, document } = await load();
    api.setImage(WEBP);
    let result;
    expect(() => (result = api.setImage(bad))).not.toThrow();
    expect(result).toBe(false);
    expect(root.getAttribute('data-image')).toBe('1');
    expect(imageOf(document).getAttribute('href')).toBe(WEBP);
  });

  it.each([['null', null], ['the empty string', ''], ['blanks', ' \n\t ']])('%s goes back to Pip', async (_what, off) => {
    const { api, root, document, window } = await load({ css: true });
    api.setImage(PNG);
    api.setState('speaking');
    api.setSpeechLevel(1);
    await sleep(120);
    expect(openOf(root)).toBeGreaterThan(0);
    expect(api.setImage(off)).toBe(true);
    expect(root.hasAttribute('data-image')).toBe(false);
    expect(imageOf(document).hasAttribute('href')).toBe(false);
    expect(root.style.getPropertyValue('--open')).toBe('');
    expect(shown(window, document.querySelector('.character'))).toBe(true);
    expect(shown(window, document.querySelector('.picture'))).toBe(false);
    expect(root.getAttribute('data-state')).toBe('speaking'); // the state is untouched
    // and a picture can come back
    expect(api.setImage(JPEG)).toBe(true);
    expect(root.getAttribute('data-image')).toBe('1');
    expect(imageOf(document).getAttribute('href')).toBe(JPEG);
  });

  it('the last picture wins; the state, pose and look are untouched; a resting avatar wakes', async () => {
    const { api, root, document } = await load({ url: 'http://localhost/avatar.html?rest=300' });
    api.setState('waiting');
    api.setLook('ocean');
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    api.setImage(PNG);
    api.setImage(GIF);
    expect(imageOf(document).getAttribute('href')).toBe(GIF);
    expect(root.classList.contains('resting')).toBe(false);
    expect(root.getAttribute('data-state')).toBe('waiting');
    expect(root.getAttribute('data-pose')).toBe('waiting');
    expect(root.getAttribute('data-look')).toBe('ocean');
    await sleep(450); // rests again, with the picture
    expect(root.classList.contains('resting')).toBe(true);
  });

  it('a picture the engine cannot decode falls back to Pip', async () => {
    const { api, root, document, window } = await load();
    api.setImage(PNG);
    imageOf(document).dispatchEvent(new window.Event('error'));
    expect(root.hasAttribute('data-image')).toBe(false);
    expect(imageOf(document).hasAttribute('href')).toBe(false);
    api.setImage(GIF); // a new one is shown again
    expect(root.getAttribute('data-image')).toBe('1');
  });

  it('is remembered when called before DOMContentLoaded: the last accepted call wins, refused ones change nothing', async () => {
    const { root, document, window } = await load({
      early: `window.__results = [
                hermesAvatar.setImage(${JSON.stringify(GIF)}),
                hermesAvatar.setImage(${JSON.stringify(PNG)}),
                hermesAvatar.setImage('https://example.com/me.png'),
                hermesAvatar.setImage(42),
              ];
              hermesAvatar.setState('thinking');
              window.__stateAtCall = document.readyState;`,
    });
    expect(window.__stateAtCall).toBe('loading');
    expect(window.__results).toEqual([true, true, false, false]);
    expect(root.getAttribute('data-image')).toBe('1');
    expect(imageOf(document).getAttribute('href')).toBe(PNG);
    expect(root.getAttribute('data-pose')).toBe('thinking');

    const off = await load({ early: `hermesAvatar.setImage(${JSON.stringify(PNG)}); hermesAvatar.setImage(null);` });
    expect(off.root.hasAttribute('data-image')).toBe(false);
    expect(imageOf(off.document).hasAttribute('href')).toBe(false);
  });

  it('speaking: --open, the stretch, the hop and the ring rise with setSpeechLevel and fall back at rest', async () => {
    const { api, root, document } = await load();
    api.setImage(PNG);
    api.setState('speaking');
    const feed = async (level) => {
      for (let i = 0; i < 12; i++) {
        api.setSpeechLevel(level);
        await sleep(25);
      }
      return { open: openOf(root), stretch: stretchOf(document), hop: hopOf(document), ring: ringOf(document), ringScale: ringScaleOf(document) };
    };
    const quiet = await feed(0);
    const half = await feed(0.5);
    const loud = await feed(1);
    expect(quiet.open).toBeLessThan(0.05);
    expect(half.open).toBeGreaterThan(0.4);
    expect(half.open).toBeLessThan(0.6);
    expect(loud.open).toBeGreaterThan(0.8);
    // the same value as Pip's mouth (hidden, but still driven)
    expect(Math.abs(loud.open - mouthOpen(document))).toBeLessThan(0.05);
    for (const k of ['stretch', 'ring', 'ringScale']) {
      expect(half[k], k).toBeGreaterThan(quiet[k]);
      expect(loud[k], k).toBeGreaterThan(half[k]);
    }
    expect(loud.stretch).toBeGreaterThan(1.06);
    expect(loud.hop).toBeLessThan(-4); // up
    expect(half.hop).toBeGreaterThan(loud.hop);
    expect(loud.ring).toBeGreaterThan(0.9);
    expect(quiet.ring).toBeLessThan(0.45);
    api.setState('idle');
    await sleep(700);
    expect(openOf(root)).toBeLessThan(0.02);
    expect(stretchOf(document)).toBeLessThan(1.002);
    expect(ringOf(document)).toBeLessThan(0.05);
  });

  it('speaking without setSpeechLevel: the procedural syllables move the picture; so does a line being said', async () => {
    const { api, root, document } = await load();
    api.setImage(JPEG);
    api.setState('speaking');
    let max = 0;
    const seen = new Set();
    for (let i = 0; i < 30; i++) {
      await sleep(25);
      max = Math.max(max, openOf(root));
      seen.add(openOf(root));
    }
    expect(max).toBeGreaterThan(0.2);
    expect(seen.size).toBeGreaterThan(4); // it moves
    api.setState('idle');
    await sleep(500);
    api.speak('Hello there, this is a line of about sixty characters long.');
    expect(root.getAttribute('data-pose')).toBe('speaking');
    max = 0;
    for (let i = 0; i < 30; i++) {
      await sleep(25);
      max = Math.max(max, stretchOf(document));
    }
    expect(max).toBeGreaterThan(1.015);
    // the bubble works above the picture
    expect(root.classList.contains('has-bubble')).toBe(true);
    expect(document.querySelector('.bubble-text').textContent).toBe('Hello there, this is a line of about sixty characters long.');
  });

  it('listening: the ring follows the microphone level; the picture itself does not talk', async () => {
    const { api, root, document } = await load();
    api.setImage(PNG);
    api.setVolume(0);
    expect(root.getAttribute('data-pose')).toBe('listening');
    await sleep(400);
    const quiet = { ring: ringOf(document), scale: ringScaleOf(document) };
    for (let i = 0; i < 12; i++) {
      api.setVolume(1);
      await sleep(30);
    }
    const loud = { ring: ringOf(document), scale: ringScaleOf(document) };
    expect(quiet.ring).toBeLessThan(0.4);
    expect(loud.ring).toBeGreaterThan(quiet.ring + 0.5);
    expect(loud.scale).toBeGreaterThan(quiet.scale + 0.04);
    expect(openOf(root)).toBeLessThan(0.02);
    expect(stretchOf(document)).toBe(1);
    await sleep(1700); // the level stops arriving: idle, the ring fades
    expect(root.getAttribute('data-pose')).toBe('idle');
    expect(ringOf(document)).toBeLessThan(0.05);
  });

  it.each([['thinking'], ['waiting'], ['error'], ['tool']])('%s: a ring in the pose\'s colour and a badge with its icon', async (state) => {
    const { api, window, document, root } = await load({ css: true });
    api.setImage(PNG);
    const badge = document.querySelector('.badge');
    expect(window.getComputedStyle(badge).opacity).toBe('0');
    api.setState(state);
    expect(window.getComputedStyle(badge).opacity).toBe('1');
    for (const other of ['thinking', 'waiting', 'error', 'tool']) {
      const icon = document.querySelector(`.badge-${other}`);
      expect(shown(window, icon), other).toBe(other === state);
      expect(icon.children.length, other).toBeGreaterThan(0); // a shape, not only a colour
    }
    await sleep(1000);
    expect(ringOf(document)).toBeGreaterThan(0.8);
    // the ring and the badge take the pose's colour (--glow: var(--glow-<pose>))
    const glowVar = { thinking: 'think', waiting: 'wait', error: 'error', tool: 'tool' }[state];
    expect(window.getComputedStyle(root).getPropertyValue('--glow').trim()).toBe(`var(--glow-${glowVar})`);
    api.setState('idle');
    expect(window.getComputedStyle(badge).opacity).toBe('0');
    await sleep(900);
    expect(ringOf(document)).toBeLessThan(0.05);
  });

  it.each([['idle'], ['speaking'], ['listening']])('%s: no badge', async (state) => {
    const { api, window, document } = await load({ css: true });
    api.setImage(PNG);
    api.setState(state);
    expect(window.getComputedStyle(document.querySelector('.badge')).opacity).toBe('0');
  });

  it('the stylesheet: the ring in the pose\'s colour, the look\'s colours round the picture, the state loops', () => {
    expect(CSS_CODE).toMatch(/\.avatar:not\(\[data-pose="idle"\]\) \.picture-ring \{ stroke: var\(--glow\); \}/);
    expect(CSS_CODE).toMatch(/\.picture-ring \{[^}]*stroke: var\(--body\);/);
    expect(CSS_CODE).toMatch(/\.picture-rim \{[^}]*stroke: var\(--body\);/);
    expect(CSS_CODE).toMatch(/\.picture-bg \{ fill: var\(--body-hi\); \}/);
    expect(CSS_CODE).toMatch(/\.badge-bg \{ fill: var\(--glow\);/);
    expect(CSS_CODE).toMatch(/\.avatar\[data-pose="thinking"\] \.picture-ring \{[^}]*animation: av-ring-turn /);
    expect(CSS_CODE).toMatch(/\.avatar\[data-pose="waiting"\] \.picture-ring \{ animation: av-pulse /);
    expect(CSS_CODE).toMatch(/\.avatar\[data-pose="tool"\] \.badge-gear \{ animation: av-spin /);
    expect(CSS_CODE).toMatch(/\.avatar\[data-image="1"\] \.character \{ display: none; \}/);
  });

  it('the look still colours it', async () => {
    const { api, root, window } = await load({ css: true });
    api.setImage(PNG);
    api.setLook('sunset');
    expect(root.getAttribute('data-look')).toBe('sunset');
    expect(window.getComputedStyle(root).getPropertyValue('--lk-body').trim()).toBe('#ff9673');
    expect(root.getAttribute('data-image')).toBe('1');
  });

  it('idle: breathes like Pip (a CSS loop the resting rule and the host pause), and the frame loop stops', async () => {
    const { api, window, document, root } = await load({ css: true, url: 'http://localhost/avatar.html?rest=300' });
    api.setImage(PNG);
    const breath = document.querySelector('.picture-breath');
    // (jsdom keeps the shorthand as written: read `animation`)
    expect(window.getComputedStyle(breath).getPropertyValue('animation')).toMatch(/^av-bob 4\.4s /);
    expect(CSS).toMatch(/@keyframes av-bob \{/);
    expect(CSS).toMatch(/\.avatar\.resting \.breath,[^{]*\.avatar\.resting \.picture-breath,[^{]*\{\s*animation-play-state: paused;/);
    await sleep(450);
    expect(root.classList.contains('resting')).toBe(true);
    expect(window.getComputedStyle(breath).getPropertyValue('animation-play-state')).toBe('paused');
    const settled = window.__frames;
    await sleep(300);
    expect(window.__frames).toBe(settled);
    expect(openOf(root)).toBe(0);
    expect(stretchOf(document)).toBe(1);
  });

  describe('with reduced motion', () => {
    it('speaking: the ring still shows the voice, the picture holds still (no stretch, no hop, no ring growth)', async () => {
      const { api, root, document, window } = await load({ reducedMotion: true, css: true });
      api.setImage(PNG);
      expect(root.classList.contains('reduced-motion')).toBe(true);
      api.setState('speaking');
      for (let i = 0; i < 12; i++) {
        api.setSpeechLevel(1);
        await sleep(25);
      }
      expect(openOf(root)).toBeGreaterThan(0.8);
      expect(ringOf(document)).toBeGreaterThan(0.6);
      expect(document.querySelector('.picture-talk').style.transform).toBe('');
      expect(ringScaleOf(document)).toBe(1);
      // no keyframe loops (breathing, the turning or pulsing ring, the spinning gear)
      const animation = (sel) => window.getComputedStyle(document.querySelector(sel)).getPropertyValue('animation');
      expect(animation('.picture-breath')).toBe('none');
      api.setState('thinking');
      expect(animation('.picture-ring')).toBe('none');
      api.setState('tool');
      expect(animation('.badge-gear')).toBe('none');
    });

    it('follows the preference as it changes', async () => {
      const { api, root, document, window } = await load({ reducedMotion: false });
      api.setImage(PNG);
      api.setState('speaking');
      for (let i = 0; i < 12; i++) {
        api.setSpeechLevel(1);
        await sleep(25);
      }
      expect(stretchOf(document)).toBeGreaterThan(1.06);
      window.__setReducedMotion(true);
      for (let i = 0; i < 4; i++) {
        api.setSpeechLevel(1);
        await sleep(25);
      }
      expect(document.querySelector('.picture-talk').style.transform).toBe('');
      expect(openOf(root)).toBeGreaterThan(0.8);
    });
  });

  it('the page allows images from data: URLs only, and nothing else new (CSP)', () => {
    const meta = new JSDOM(HTML).window.document.querySelector('meta[http-equiv="Content-Security-Policy"]');
    const policy = Object.fromEntries(
      meta.getAttribute('content').split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v.join(' ')]),
    );
    expect(policy).toEqual({
      'default-src': "'none'",
      'script-src': "'self'",
      'style-src': "'self'",
      'img-src': 'data:',
      'base-uri': "'none'",
      'form-action': "'none'",
    });
  });

  it('does not throw on any argument type, before or after the page is parsed', async () => {
    const { api, window } = await load({
      early: `window.__threw = false;
              for (const v of [undefined, null, 0, NaN, '', 'x', {}, [], () => {}, Symbol.iterator]) {
                try { hermesAvatar.setImage(v); } catch (e) { window.__threw = true; }
              }`,
    });
    expect(window.__threw).toBe(false);
    for (const v of [undefined, null, 0, -1, NaN, Infinity, '', 'x', {}, [], () => {}, Symbol.iterator, HOSTILE]) {
      expect(() => api.setImage(v)).not.toThrow();
    }
  });
});
