import { describe, expect, it, vi } from 'vitest';
import { TYPE_SAMPLE, warmTypography } from '../lib/markdown/warm';
import { highlighterAsked } from '../lib/markdown/highlight.svelte';
import { backendContext } from '../lib/backend';
import { FakeShell } from '../lib/backend/fake';
import { tauriBackend } from '../lib/backend/tauri';

const ctx = () => {
  new FakeShell().install();
  return backendContext(tauriBackend());
};

describe('typography warm-up (fonts chosen before a streamed reply needs them)', () => {
  it('lays out every markdown style once, hidden from people and assistive tech, then leaves nothing behind', async () => {
    let seen: { tags: string[]; hidden: string | null; inert: boolean; opacity: string; comment: boolean } | null =
      null;
    const raf = vi.spyOn(window, 'requestAnimationFrame').mockImplementation((cb) => {
      const host = document.querySelector('.type-warmup') as HTMLElement | null;
      if (host && !seen)
        seen = {
          tags: [...new Set([...host.querySelectorAll('*')].map((e) => e.tagName.toLowerCase()))],
          hidden: host.getAttribute('aria-hidden'),
          inert: host.inert,
          opacity: host.style.opacity,
          comment: !!host.querySelector('pre code .hljs-comment'),
        };
      return setTimeout(() => cb(performance.now()), 0) as unknown as number;
    });
    try {
      await warmTypography(ctx(), 2);
      expect(seen).not.toBeNull();
      const s = seen!;
      for (const tag of ['h1', 'h2', 'h3', 'h4', 'strong', 'em', 'del', 'code', 'pre', 'ul', 'ol', 'blockquote', 'table', 'a'])
        expect(s.tags, tag).toContain(tag);
      expect(s.comment, "highlighted code's comment style, in a code block").toBe(true);
      expect(s.hidden).toBe('true');
      expect(s.inert).toBe(true);
      expect(Number(s.opacity)).toBeLessThan(0.01);
      expect(document.querySelector('.type-warmup')).toBeNull();
      // the code highlighter stays unloaded (it loads when a reply shows code): no fence names a language
      expect(TYPE_SAMPLE).not.toMatch(/```\w/);
      expect(highlighterAsked()).toBe(false);
    } finally {
      raf.mockRestore();
    }
  });

  it('a window that gets no frames still removes the sample', async () => {
    vi.useFakeTimers();
    const raf = vi.spyOn(window, 'requestAnimationFrame').mockImplementation(() => 0);
    try {
      const p = warmTypography(ctx());
      expect(document.querySelector('.type-warmup')).not.toBeNull();
      await vi.advanceTimersByTimeAsync(1600);
      await p;
      expect(document.querySelector('.type-warmup')).toBeNull();
    } finally {
      raf.mockRestore();
      vi.useRealTimers();
    }
  });
});
