import type * as Engine from './hljs-engine';

/**
 * The code highlighter, loaded on first use (its own chunk: ./hljs-engine.ts). `engine` is reactive: a code block
 * shown before it has loaded shows its plain text, then the highlighted text once it is here (a few ms later; the
 * launch warms it up in an idle moment anyway, see `warmHighlighter`).
 */
export const highlighter = $state<{ engine: typeof Engine | null }>({ engine: null });

let loading: Promise<typeof Engine> | null = null;

/** Load the highlighter (once); resolves when it can be used. If its chunk cannot load (a damaged install), code
 *  blocks stay plain text: the promise rejects, once, and is not retried. */
export function loadHighlighter(): Promise<typeof Engine> {
  if (!loading) {
    loading = import('./hljs-engine').then((m) => {
      highlighter.engine = m;
      return m;
    });
    loading.catch((e) => console.warn('the code highlighter did not load; code blocks stay plain text', e));
  }
  return loading;
}

/** Highlighted HTML for `code` in `language` (a fence's first word, lower case), or `null` when the highlighter has
 *  not loaded yet (asked for here) or does not know the language. */
export function highlightNow(code: string, language: string): string | null {
  const engine = highlighter.engine;
  if (!engine) {
    if (language !== '') void loadHighlighter();
    return null;
  }
  return engine.knownLanguage(language) ? engine.highlight(code, language) : null;
}

let warming = false;

/**
 * hljs compiles a language's grammar the first time it is used, and DOMPurify sets itself up on its first call:
 * tens of milliseconds inside whatever render first shows a code block — in a streamed reply, a visible stall.
 * This loads the highlighter and does that work ahead of time, one language per idle moment, once.
 */
export function warmHighlighter(): Promise<void> {
  if (warming) return Promise.resolve();
  warming = true;
  const later = (fn: () => void) => {
    const w = window as Window & { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number };
    if (w.requestIdleCallback) w.requestIdleCallback(fn, { timeout: 2000 });
    else setTimeout(fn, 30);
  };
  return loadHighlighter().then(
    (engine) => {
      const names = [...engine.languages];
      const step = () => {
        const name = names.shift();
        if (!name) return;
        engine.highlight('x', name);
        later(step);
      };
      later(step);
    },
    () => {}, // (said once by loadHighlighter)
  );
}
