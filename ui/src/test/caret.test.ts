import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { REFOCUS_AFTER_REST_MS, watchCaretRest } from '../lib/util/caret';

describe('the caret at rest', () => {
  let stop: () => void = () => {};
  beforeEach(() => {
    vi.useFakeTimers();
    document.body.innerHTML = '<textarea id="t">hello world</textarea><button id="b">b</button>';
    vi.spyOn(document, 'hasFocus').mockReturnValue(true);
  });
  afterEach(() => {
    stop();
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  function field() {
    const t = document.getElementById('t') as HTMLTextAreaElement;
    t.focus();
    t.setSelectionRange(2, 5);
    const seen: string[] = [];
    t.addEventListener('blur', () => seen.push('blur'));
    t.addEventListener('focus', () => seen.push('focus'));
    return { t, seen };
  }

  it('gives the focused field the focus again after the rest, its selection kept, once', () => {
    const { t, seen } = field();
    stop = watchCaretRest(11_100);
    vi.advanceTimersByTime(11_100 + REFOCUS_AFTER_REST_MS - 1);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual(['blur', 'focus']);
    expect(document.activeElement).toBe(t);
    expect([t.selectionStart, t.selectionEnd]).toEqual([2, 5]);
    vi.advanceTimersByTime(60_000);
    expect(seen).toEqual(['blur', 'focus']); // its own focus is not input: no loop
  });

  it('waits again after every key, click or focus', () => {
    const { seen } = field();
    stop = watchCaretRest(10_000);
    vi.advanceTimersByTime(12_000);
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'a' }));
    vi.advanceTimersByTime(12_000);
    document.dispatchEvent(new MouseEvent('mousedown'));
    vi.advanceTimersByTime(12_000);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1_000);
    expect(seen).toEqual(['blur', 'focus']);
  });

  it('leaves a field that commits on blur alone (a rename in progress)', () => {
    const { t, seen } = field();
    t.setAttribute('data-blur-commits', '');
    stop = watchCaretRest(5_000);
    vi.advanceTimersByTime(120_000);
    expect(seen).toEqual([]);
    expect(document.activeElement).toBe(t);
  });

  it('does nothing where the shell stops no blinking, nor without a focused field or window', () => {
    const { seen } = field();
    stop = watchCaretRest(null);
    vi.advanceTimersByTime(120_000);
    expect(seen).toEqual([]);
    stop = watchCaretRest(5_000);
    (document.getElementById('b') as HTMLButtonElement).focus();
    vi.advanceTimersByTime(120_000);
    expect(seen).toEqual(['blur']); // (the button took the focus) no refocus of a button
    field().t.focus();
    vi.mocked(document.hasFocus).mockReturnValue(false);
    vi.advanceTimersByTime(120_000);
    expect(document.activeElement?.id).toBe('t');
  });
});
