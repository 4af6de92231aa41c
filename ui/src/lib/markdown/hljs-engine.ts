// The code highlighter itself: highlight.js with the bundled grammars, and DOMPurify for its output. A chunk of its
// own (~100 KB), loaded on demand through ./highlight.svelte.ts: registering the grammars and setting up DOMPurify
// were ~20 ms of every launch before the first render (desktop bench, page marks), for code blocks that may never
// be on screen.
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

/** The bundled grammars' names. */
export const languages: string[] = Object.keys(LANGS);

const names = new Map(Object.keys(LANGS).map((name) => [hljs.getLanguage(name), name]));

/** The bundled grammar `language` (a name or an alias: `js`, `sh`, `html`…) belongs to, by its registered name; `null`
 *  for a language the app does not highlight. */
export function grammarOf(language: string): string | null {
  return (language !== '' && names.get(hljs.getLanguage(language))) || null;
}

/** True when `language` (a code fence's first word, lower case) is one the app highlights (names and aliases). */
export function knownLanguage(language: string): boolean {
  return language !== '' && !!hljs.getLanguage(language);
}

/** Highlighted HTML for `code`: hljs escapes the source; DOMPurify then keeps only `<span class>`. */
export function highlight(code: string, language: string): string {
  return sanitizeHighlight(hljs.highlight(code, { language, ignoreIllegals: true }).value);
}
