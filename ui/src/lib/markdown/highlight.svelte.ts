import type * as Engine from './hljs-engine';

/**
 * The code highlighter, loaded on first use (its own chunk: ./hljs-engine.ts). `engine` is reactive: a code block
 * shown before it has loaded shows its plain text, then the highlighted text once it is here (a few ms later). Nothing
 * loads it before a code block needs it: until then the web process does not hold it (~2–3 MB, memory bench).
 */
export const highlighter = $state<{ engine: typeof Engine | null }>({ engine: null });

let loading: Promise<typeof Engine> | null = null;

/** Whether anything has asked for the highlighter yet (its chunk is loading or loaded). */
export function highlighterAsked(): boolean {
  return loading !== null;
}

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

/** Grammars compiled so far, by registered name (reactive per name: a code block waiting for one re-renders when it
 *  is ready, the others do not). */
const ready = $state<Record<string, true>>({});
const queued = new Set<string>();

function idle(fn: () => void, timeout: number) {
  const w = window as Window & { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number };
  if (w.requestIdleCallback) w.requestIdleCallback(fn, { timeout });
  else setTimeout(fn, 16);
}

/** Compile `grammar` now: hljs does it on the grammar's first use (0.5–8 ms each in JavaScriptCore, CSS the longest:
 *  bench/tools/hljs-compile-cost.py). */
function compile(engine: typeof Engine, grammar: string) {
  if (ready[grammar]) return;
  engine.highlight('x', grammar);
  ready[grammar] = true;
}

/** Highlighted HTML for `code` in `language` (a fence's first word, lower case), or `null` (plain text for now) when
 *  the highlighter has not loaded yet or the language's grammar is not compiled yet (both asked for here, for an idle
 *  moment: a grammar compiles out of the render that first shows it — in a streamed reply that render is a frame),
 *  or when the app does not highlight the language. */
export function highlightNow(code: string, language: string): string | null {
  const engine = highlighter.engine;
  if (!engine) {
    if (language !== '') void loadHighlighter();
    return null;
  }
  const grammar = engine.grammarOf(language);
  if (!grammar) return null;
  if (!ready[grammar]) {
    if (!queued.has(grammar)) {
      queued.add(grammar);
      idle(() => compile(engine, grammar), 100);
    }
    return null;
  }
  return engine.highlight(code, language);
}
