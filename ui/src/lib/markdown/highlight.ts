import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { sanitizeHighlight } from './sanitize';

const LANGS = { bash, css, diff, go, javascript, json, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGS)) {
  if (!hljs.getLanguage(name)) hljs.registerLanguage(name, lang);
}

/** True when `language` (a code fence's first word, lower case) is one the app highlights. */
export function knownLanguage(language: string): boolean {
  return language !== '' && !!hljs.getLanguage(language);
}

/** Highlighted HTML for `code`: hljs escapes the source; DOMPurify then keeps only `<span class>`. */
export function highlight(code: string, language: string): string {
  return sanitizeHighlight(hljs.highlight(code, { language, ignoreIllegals: true }).value);
}

let warming = false;

/**
 * hljs compiles a language's grammar the first time it is used, and DOMPurify sets itself up on its first call:
 * tens of milliseconds inside whatever render first shows a code block — in a streamed reply, a visible stall.
 * This does that work ahead of time, one language per idle moment, once.
 */
export function warmHighlighter(): void {
  if (warming) return;
  warming = true;
  const names = Object.keys(LANGS);
  const later = (fn: () => void) => {
    const w = window as Window & { requestIdleCallback?: (cb: () => void, o?: { timeout: number }) => number };
    if (w.requestIdleCallback) w.requestIdleCallback(fn, { timeout: 2000 });
    else setTimeout(fn, 30);
  };
  const step = () => {
    const name = names.shift();
    if (!name) return;
    highlight('x', name);
    later(step);
  };
  later(step);
}
