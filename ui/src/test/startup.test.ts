import { describe, expect, it, vi } from 'vitest';
import { waitFor } from '@testing-library/svelte';
import { ready, renderApp, storedMessage } from './helpers';

// The main window goes on screen when its page says it has rendered (src-tauri/src/window.rs `main_page_ready`), and
// the page says when the conversation is interactive, with its timeline for the shell's log (the bench's breakdown).
describe('the main page tells the shell where its start is', () => {
  it('says "rendered" once the composer is there, then "interactive" once on screen, painted and connected', async () => {
    const r = await renderApp({ history: { messages: [storedMessage('m1', 'down', 'Good morning', 1000)], cards: [] } });
    const said = () => r.calls.filter((c) => c.cmd === 'main_page_ready').map((c) => c.args);
    await waitFor(() => expect(said().length).toBeGreaterThan(0));
    expect(said()[0].interactive).toBe(false);
    expect(document.getElementById('composer-input')).not.toBeNull();
    // not connected yet: not interactive
    await new Promise((res) => setTimeout(res, 120));
    expect(said().filter((a) => a.interactive)).toHaveLength(0);
    await ready(r);
    await waitFor(() => expect(said().filter((a) => a.interactive)).toHaveLength(1));
    const marks = String(said().find((a) => a.interactive)?.marks);
    for (const m of ['history-painted', 'connected', 'shown']) expect(marks).toMatch(new RegExp(`\\b${m}=\\d+`));
    expect(marks).toMatch(/^origin=\d+ /);
    // each said once
    await new Promise((res) => setTimeout(res, 60));
    expect(said().map((a) => a.interactive)).toEqual([false, true]);
  });

  it('is on screen at the resize that gives the hidden page its size, when visibilitychange comes after the first frame', async () => {
    performance.clearMarks();
    const state = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    try {
      const r = await renderApp({ history: { messages: [storedMessage('m1', 'down', 'Good morning', 1000)], cards: [] } });
      const said = () => r.calls.filter((c) => c.cmd === 'main_page_ready').map((c) => c.args);
      await ready(r);
      await waitFor(() => expect(said().length).toBeGreaterThan(0));
      await new Promise((res) => setTimeout(res, 80));
      // rendered and connected, but the window is not on screen yet
      expect(said().filter((a) => a.interactive)).toHaveLength(0);
      expect(performance.getEntriesByName('hermes:shown')).toHaveLength(0);
      window.dispatchEvent(new Event('resize')); // a resize while still hidden says nothing
      await new Promise((res) => setTimeout(res, 60));
      expect(performance.getEntriesByName('hermes:shown')).toHaveLength(0);
      // mapped: visible, and the page gets its size; no visibilitychange yet
      state.mockReturnValue('visible');
      window.dispatchEvent(new Event('resize'));
      await waitFor(() => expect(said().filter((a) => a.interactive)).toHaveLength(1));
      expect(String(said().find((a) => a.interactive)?.marks)).toMatch(/\bshown=\d+/);
    } finally {
      state.mockRestore();
    }
  });
});
