import { describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import { tick } from 'svelte';
import Harness from './MarkdownHarness.svelte';
import type { Tokens } from 'marked';
import { BlockSplitter, blockStats, safeUrl } from '../lib/markdown/blocks';
import { frame, ready, renderApp } from './helpers';

const REPLY = `# Plan

First paragraph with **bold** and \`code\`.

- one
- two

\`\`\`ts
const x: number = 1;
\`\`\`

| a | b |
|---|---|
| 1 | 2 |

> quoted

Last paragraph grows here and keeps growing.`;

describe('block splitter', () => {
  it('re-lexes only the tail when the text grows', () => {
    const s = new BlockSplitter();
    const first = s.update(REPLY.slice(0, 60));
    const firstHeading = first[0].token;
    const blocks = s.update(REPLY);
    expect(blocks[0].token).toBe(firstHeading);
    s.update(REPLY + ' More');
    expect(s.lastLexedChars).toBeLessThan(80);
    expect(s.lastLexedChars).toBeGreaterThan(0);
  });

  it('keeps the earlier inline tokens of a growing paragraph (only its end renders again)', () => {
    const s = new BlockSplitter();
    const para = 'Some **bold** words, `code` and a [link](https://example.com) then more words';
    const para0 = (bs: { token: unknown }[]) => bs.map((x) => x.token as Tokens.Generic).find((t) => t.type === 'paragraph') as Tokens.Paragraph;
    const a = para0(s.update(`# T\n\n${para}`));
    const b = para0(s.update(`# T\n\n${para} and **more**`));
    expect(b).not.toBe(a);
    expect(b.raw).toBe(`${para} and **more**`);
    // text, strong, text, codespan, text, link are the same objects; the last text grew, the new strong is new
    expect(a.tokens.map((t) => t.type)).toEqual(['text', 'strong', 'text', 'codespan', 'text', 'link', 'text']);
    for (let i = 0; i < 6; i++) expect(b.tokens[i]).toBe(a.tokens[i]);
    expect(b.tokens[6]).not.toBe(a.tokens[6]);
    expect(b.tokens[7].type).toBe('strong');
    expect(b.tokens.map((t) => t.raw).join('')).toBe(b.raw);
    // a list growing an item keeps the items before it
    const l1 = s.update('- one\n- two')[0].token as Tokens.List;
    const l2 = s.update('- one\n- two\n- three')[0].token as Tokens.List;
    expect(l2.items[0]).toBe(l1.items[0]);
    expect(l2.items).toHaveLength(3);
  });

  it('memoizes unchanged blocks by source even after a non-append edit', () => {
    const s = new BlockSplitter();
    const a = s.update('Alpha para\n\nBeta para\n\nGamma');
    const b = s.update('Alpha para\n\nBeta para\n\nDelta');
    expect(b[0].token).toBe(a[0].token);
    expect(b[2].token).toBe(a[2].token);
  });

  it('only allows http, https and mailto links', () => {
    expect(safeUrl('https://example.com/a')).toBe('https://example.com/a');
    expect(safeUrl('mailto:a@b.c')).toBe('mailto:a@b.c');
    expect(safeUrl('javascript:alert(1)')).toBeNull();
    expect(safeUrl(' JaVaScRiPt:alert(1)')).toBeNull();
    expect(safeUrl('java\tscript:alert(1)')).toBeNull();
    expect(safeUrl('data:text/html,<script>')).toBeNull();
    expect(safeUrl('vbscript:msgbox')).toBeNull();
    expect(safeUrl('/relative')).toBeNull();
    expect(safeUrl('file:///etc/passwd')).toBeNull();
  });
});

describe('markdown rendering', () => {
  it('renders headings, lists, code with copy, tables, quotes, inline code and links', async () => {
    const r = render(Harness, { props: { text: REPLY } });
    expect(r.container.querySelector('h1')?.textContent).toBe('Plan');
    expect(r.container.querySelectorAll('li')).toHaveLength(2);
    expect(r.container.querySelector('table td')?.textContent).toBe('1');
    expect(r.container.querySelector('blockquote')?.textContent).toContain('quoted');
    expect(r.container.querySelector('code.inline')?.textContent).toBe('code');
    const code = r.container.querySelector('pre code.hljs') as HTMLElement;
    expect(code.textContent).toBe('const x: number = 1;');
    // the highlighter is its own chunk, loaded by the first code block: plain text first, then highlighted
    await waitFor(() => expect(code.querySelector('span.hljs-keyword')).not.toBeNull());
    expect(code.textContent).toBe('const x: number = 1;');
    screen.getByRole('button', { name: 'Copy code' }).click();
    expect(navigator.clipboard.writeText).toHaveBeenCalledWith('const x: number = 1;');
  });

  it('links open through open_external, never by navigating', async () => {
    const openExternal = vi.fn(async () => {});
    const r = render(Harness, { props: { text: 'See [docs](https://example.com/docs).', openExternal } });
    const a = r.container.querySelector('a') as HTMLAnchorElement;
    expect(a.getAttribute('href')).toBe('https://example.com/docs');
    const ev = new MouseEvent('click', { bubbles: true, cancelable: true });
    a.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(true);
    expect(openExternal).toHaveBeenCalledWith('https://example.com/docs');
  });

  it('does not load remote images: alt text and the link instead', () => {
    const r = render(Harness, { props: { text: '![a cat](https://evil.example/cat.png)' } });
    expect(r.container.querySelector('img')).toBeNull();
    expect(r.container.textContent).toContain('a cat');
    expect(r.container.querySelector('a')?.getAttribute('href')).toBe('https://evil.example/cat.png');
  });

  it('streaming re-renders only the tail: earlier blocks keep their elements', async () => {
    const r = render(Harness, { props: { text: '' } });
    let text = '';
    const parts = REPLY.split(/(?<=\s)/);
    let firstH1: Element | null = null;
    let firstList: Element | null = null;
    let createdAfterList = 0;
    for (const p of parts) {
      text += p;
      await r.rerender({ text });
      if (!firstH1) firstH1 = r.container.querySelector('h1');
      if (!firstList && r.container.querySelector('ul') && text.includes('```')) {
        firstList = r.container.querySelector('ul');
        createdAfterList = blockStats.created;
      }
    }
    await tick();
    expect(r.container.querySelector('h1')).toBe(firstH1);
    expect(r.container.querySelector('ul')).toBe(firstList);
    // Dozens of edits after the list; far fewer new block components than edits × blocks.
    const created = blockStats.created - createdAfterList;
    expect(created).toBeLessThan(parts.length);
    expect(r.container.textContent).toContain('Last paragraph grows here and keeps growing.');
  });

  it('coalesces many edits of a streamed message into the final text', async () => {
    const ipc = await renderApp();
    await ready(ipc);
    let text = '';
    for (let i = 0; i < 200; i++) {
      text += `w${i} `;
      ipc.emit({ event: 'message', id: 'r1', text, final: false });
    }
    ipc.emit({ event: 'message', id: 'r1', text: text + 'END', final: true });
    await frame();
    await frame();
    const bubble = document.querySelector('[data-message-id="r1"]') as HTMLElement;
    expect(bubble.textContent).toContain('w199 END');
    expect(document.querySelectorAll('[data-message-id="r1"]')).toHaveLength(1);
  });
});
