import '@testing-library/jest-dom/vitest';
import { afterEach, vi } from 'vitest';
import { cleanup, configure } from '@testing-library/svelte';
import { clearMocks } from '@tauri-apps/api/mocks';
import { loadLocale } from '../lib/i18n/index.svelte';

// Every catalogue loaded, as main.ts loads the saved one before the first render: a test switches language at once
// (test/i18n-load.test.ts covers a catalogue that is still on its way).
await Promise.all([loadLocale('ru'), loadLocale('zh')]);

// findBy*/waitFor: 1 s (the default) is too short on a loaded 2-core CI machine; a real failure still fails.
configure({ asyncUtilTimeout: 5000 });

// jsdom lacks a few browser APIs the UI (and virtua) use.
// jsdom has no layout: report a tall message-list viewport and 40 px rows so virtua mounts the rows.
type ROCallback = (entries: { target: Element; contentRect: { width: number; height: number } }[]) => void;
class RO {
  constructor(private cb: ROCallback) {}
  observe(target: Element) {
    const height = target.getAttribute('role') === 'log' ? 4000 : 40;
    setTimeout(() => this.cb([{ target, contentRect: { width: 800, height } }]), 0);
  }
  unobserve() {}
  disconnect() {}
}
(globalThis as unknown as { ResizeObserver: typeof RO }).ResizeObserver = RO;
(window as unknown as { ResizeObserver: typeof RO }).ResizeObserver = RO;

if (!window.matchMedia) {
  window.matchMedia = (q: string) =>
    ({
      matches: false,
      media: q,
      onchange: null,
      addEventListener() {},
      removeEventListener() {},
      addListener() {},
      removeListener() {},
      dispatchEvent: () => false,
    }) as unknown as MediaQueryList;
}

Object.defineProperty(navigator, 'clipboard', {
  value: { writeText: vi.fn(async () => {}) },
  configurable: true,
});

HTMLMediaElement.prototype.play = vi.fn(async () => {});
HTMLMediaElement.prototype.pause = vi.fn();
Element.prototype.scrollTo ??= function () {};

afterEach(() => {
  cleanup();
  clearMocks();
  localStorage.clear();
  document.documentElement.removeAttribute('data-theme');
});

// jsdom never lays out, so offsetParent is always null; virtua skips items without one.
Object.defineProperty(HTMLElement.prototype, 'offsetParent', {
  configurable: true,
  get() {
    return (this as HTMLElement).parentElement;
  },
});
