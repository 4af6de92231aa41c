/** Longest wait for a frame: WebKitGTK throttles requestAnimationFrame hard in some windows (measured: 3 frames in
 *  3 s under Xvfb), and streamed text must not then arrive as one huge late batch. */
export const FRAME_FALLBACK_MS = 50;

/**
 * Runs `fn` once, at the next animation frame or after FRAME_FALLBACK_MS, whichever comes first (a 16 ms timer
 * where rAF is missing). Callers coalesce their work into it: at most one update per frame.
 */
export function nextFrame(fn: () => void): void {
  if (typeof requestAnimationFrame !== 'function') {
    setTimeout(fn, 16);
    return;
  }
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    cancelAnimationFrame(raf);
    clearTimeout(timer);
    fn();
  };
  const raf = requestAnimationFrame(run);
  const timer = setTimeout(run, FRAME_FALLBACK_MS);
}

export function newId(): string {
  if (typeof crypto !== 'undefined' && 'randomUUID' in crypto) return crypto.randomUUID();
  return `id-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/**
 * A User Timing mark (first time only), read by the desktop bench (`src-tauri/tests/bench.rs`) to time launch →
 * interactive without WebDriver's polling in the figure. `afterPaint`: once the next frame has rendered.
 */
export function markOnce(name: string, afterPaint = false): void {
  if (typeof performance === 'undefined' || typeof performance.mark !== 'function') return;
  if (performance.getEntriesByName(name).length > 0) return;
  const mark = () => {
    if (performance.getEntriesByName(name).length > 0) return;
    performance.mark(name);
    for (const l of [...markListeners]) l();
  };
  if (!afterPaint) mark();
  else nextFrame(() => setTimeout(mark, 0));
}

const markListeners = new Set<() => void>();

/** Runs `fn` once, when every one of `names` has been marked by {@link markOnce} (at once if they all are). Returns a
 *  function that stops waiting. */
export function whenMarked(names: string[], fn: () => void): () => void {
  const all = () =>
    typeof performance !== 'undefined' &&
    typeof performance.getEntriesByName === 'function' &&
    names.every((n) => performance.getEntriesByName(n).length > 0);
  if (all()) {
    fn();
    return () => {};
  }
  const check = () => {
    if (!all()) return;
    markListeners.delete(check);
    fn();
  };
  markListeners.add(check);
  return () => markListeners.delete(check);
}

/** The page's `hermes:` marks as `name=ms …` (ms after its navigation began), and `origin=` the epoch ms of that
 *  start: the Quick Ask page hands them to the shell's log for the bench (`src-tauri/tests/bench.rs`). */
export function pageMarks(): string {
  if (typeof performance === 'undefined' || typeof performance.getEntriesByType !== 'function') return '';
  const marks = performance
    .getEntriesByType('mark')
    .filter((e) => e.name.startsWith('hermes:'))
    .map((e) => `${e.name.slice(7)}=${Math.round(e.startTime)}`);
  return [`origin=${Math.round(performance.timeOrigin)}`, ...marks].join(' ');
}
