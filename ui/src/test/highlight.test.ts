import { describe, expect, it, vi } from 'vitest';
import hljs from 'highlight.js/lib/core';
import { highlight, knownLanguage } from '../lib/markdown/hljs-engine';
import { highlighter, highlightNow, loadHighlighter, warmHighlighter } from '../lib/markdown/highlight.svelte';

const compiled = (name: string) => !!(hljs.getLanguage(name) as { isCompiled?: boolean } | undefined)?.isCompiled;

describe('code highlighter', () => {
  it('knows the bundled languages only', () => {
    expect(knownLanguage('rust')).toBe(true);
    expect(knownLanguage('typescript')).toBe(true);
    expect(knownLanguage('')).toBe(false);
    expect(knownLanguage('cobol')).toBe(false);
  });

  it('keeps only escaped text and <span class> in its output', () => {
    const html = highlight('let x = "<img src=x onerror=alert(1)>";', 'rust');
    expect(html).toContain('hljs-keyword');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
  });

  it('is loaded on first use: plain text until then, highlighted after', async () => {
    expect(highlighter.engine).toBeNull();
    expect(highlightNow('fn main() {}', 'rust')).toBeNull(); // asks for it
    await loadHighlighter();
    expect(highlighter.engine).not.toBeNull();
    expect(highlightNow('fn main() {}', 'rust')).toContain('hljs-keyword');
    expect(highlightNow('fn main() {}', 'cobol')).toBeNull();
    expect(highlightNow('fn main() {}', '')).toBeNull();
  });

  it('compiles every grammar ahead of the first code block, one per idle moment', async () => {
    vi.useFakeTimers();
    try {
      const names = ['bash', 'css', 'diff', 'go', 'json', 'python', 'sql', 'xml', 'yaml'];
      expect(names.some(compiled)).toBe(false); // untouched so far in this file's module instance
      await warmHighlighter();
      await vi.advanceTimersByTimeAsync(40);
      const early = names.filter(compiled).length;
      expect(early).toBeLessThan(names.length); // not all in one task
      await vi.advanceTimersByTimeAsync(2000);
      expect(names.filter(compiled)).toEqual(names);
    } finally {
      vi.useRealTimers();
    }
  });
});
