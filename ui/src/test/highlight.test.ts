import { describe, expect, it, vi } from 'vitest';
import hljs from 'highlight.js/lib/core';
import { grammarOf, highlight, knownLanguage } from '../lib/markdown/hljs-engine';
import { highlighter, highlightNow, loadHighlighter } from '../lib/markdown/highlight.svelte';

const compiled = (name: string) => !!(hljs.getLanguage(name) as { isCompiled?: boolean } | undefined)?.isCompiled;

describe('code highlighter', () => {
  it('knows the bundled languages only', () => {
    expect(knownLanguage('rust')).toBe(true);
    expect(knownLanguage('typescript')).toBe(true);
    expect(knownLanguage('')).toBe(false);
    expect(knownLanguage('cobol')).toBe(false);
  });

  it('names the grammar of a language or an alias, and none for others', () => {
    expect(grammarOf('rust')).toBe('rust');
    expect(grammarOf('js')).toBe('javascript');
    expect(grammarOf('html')).toBe('xml');
    expect(grammarOf('cobol')).toBeNull();
    expect(grammarOf('')).toBeNull();
  });

  it('keeps only escaped text and <span class> in its output', () => {
    const html = highlight('let x = "<img src=x onerror=alert(1)>";', 'rust');
    expect(html).toContain('hljs-keyword');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img');
  });

  it('is loaded on first use, each grammar compiled out of the render that first needs it: plain text until then', async () => {
    vi.useFakeTimers();
    try {
      expect(highlighter.engine).toBeNull();
      expect(highlightNow('func main() {}', 'go')).toBeNull(); // asks for the engine
      await loadHighlighter();
      expect(highlighter.engine).not.toBeNull();
      expect(compiled('go')).toBe(false);
      expect(highlightNow('func main() {}', 'go')).toBeNull(); // asks for the grammar, not compiled in this call
      expect(compiled('go')).toBe(false);
      await vi.advanceTimersByTimeAsync(200);
      expect(compiled('go')).toBe(true);
      expect(highlightNow('func main() {}', 'go')).toContain('hljs-keyword');
      expect(highlightNow('fn main() {}', 'cobol')).toBeNull();
      expect(highlightNow('fn main() {}', '')).toBeNull();
      // an alias waits for, then uses, its grammar
      expect(highlightNow('const a = 1;', 'js')).toBeNull();
      await vi.advanceTimersByTimeAsync(200);
      expect(compiled('javascript')).toBe(true);
      expect(highlightNow('const a = 1;', 'js')).toContain('hljs-keyword');
    } finally {
      vi.useRealTimers();
    }
  });

  it('loading the highlighter compiles no grammar: each compiles when a code block first asks for it', async () => {
    vi.useFakeTimers();
    try {
      const others = ['bash', 'css', 'diff', 'json', 'python', 'sql', 'xml', 'yaml'];
      await loadHighlighter();
      await vi.advanceTimersByTimeAsync(5000);
      expect(others.filter(compiled)).toEqual([]);
      expect(highlightNow('x = 1', 'python')).toBeNull(); // asked for
      await vi.advanceTimersByTimeAsync(200);
      expect(compiled('python')).toBe(true);
      expect(others.filter(compiled)).toEqual(['python']);
    } finally {
      vi.useRealTimers();
    }
  });
});
