// An approval card must read exactly as the command runs. The agent (or anyone on its path) may hide what a command
// does with characters a terminal or a browser draws as nothing or draws elsewhere: bidi overrides that reorder text,
// zero-width characters inside a host name, ANSI escapes that clear a line, a carriage return that "overwrites" what
// came before, non-ASCII spaces, hundreds of spaces that push the tail off screen, or a Cyrillic letter in a Latin
// host name. `reveal` turns a command into segments: plain text, shown as itself, and marks, each a visible token
// (`⟦U+202E⟧`, `⟦ESC[2K⟧`, `⟦CR⟧`) standing for exactly the characters it replaces. It is pure, so it is unit-tested.

export type Segment =
  | { kind: 'text'; text: string }
  /** `raw`: the characters this token stands for; `label`: what is shown; `hidden`: counts as a hidden character. */
  | { kind: 'mark'; raw: string; label: string; hidden: boolean; title: string }
  | { kind: 'newline' };

export interface Revealed {
  segments: Segment[];
  /** Characters that draw as nothing, move text or control a terminal. */
  hiddenCount: number;
  /** Lines of the command as it runs (newline-separated). */
  lines: number;
  /** Words mixing Latin with a look-alike alphabet (Cyrillic, Greek, Armenian, Cherokee). */
  mixedScripts: string[];
  /** Rows the command takes at `cols` columns, wrapping long lines (an estimate, for the approve gate). */
  rows: (cols: number) => number;
}

/** Runs of plain spaces at least this long (after text on a line) are one token: they push the rest out of sight. */
export const SPACE_RUN = 16;

const NAMES: Record<number, string> = {
  0x00: 'NUL',
  0x07: 'BEL',
  0x08: 'BS',
  0x09: 'TAB',
  0x0b: 'VT',
  0x0c: 'FF',
  0x0d: 'CR',
  0x1b: 'ESC',
  0x7f: 'DEL',
  0x00a0: 'NBSP',
  0x00ad: 'SHY',
  0x061c: 'ALM',
  0x200b: 'ZWSP',
  0x200c: 'ZWNJ',
  0x200d: 'ZWJ',
  0x200e: 'LRM',
  0x200f: 'RLM',
  0x2028: 'LSEP',
  0x2029: 'PSEP',
  0x202a: 'LRE',
  0x202b: 'RLE',
  0x202c: 'PDF',
  0x202d: 'LRO',
  0x202e: 'RLO',
  0x2060: 'WJ',
  0x2066: 'LRI',
  0x2067: 'RLI',
  0x2068: 'FSI',
  0x2069: 'PDI',
  0x3000: 'IDEOGRAPHIC SPACE',
  0xfeff: 'BOM',
};

function hex(cp: number): string {
  return 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
}

// Characters that are not drawn as themselves: controls (C0 but newline, DEL, C1), format characters (bidi, zero
// width, soft hyphen, BOM, tags…), every space but U+0020, line/paragraph separators, private use, unassigned and
// lone surrogates, variation selectors and the Hangul fillers (letters that draw as blank).
const INVISIBLE =
  /[\p{Cc}\p{Cf}\p{Zs}\p{Zl}\p{Zp}\p{Co}\p{Cn}\p{Cs}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u{115F}\u{1160}\u{3164}\u{FFA0}\u{034F}\u{17B4}\u{17B5}\u{180B}-\u{180F}]/u;

/** ESC [ … final (CSI), ESC ] … BEL or ESC \ (OSC), ESC P/X/^/_ … ESC \ (strings), ESC + one character. */
const ESCAPE =
  // eslint-disable-next-line no-control-regex
  /^\x1b(?:\[[0-?]*[ -/]*[@-~]|[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])?/;

function printable(s: string): string {
  // the token shows an escape's own bytes, themselves made visible (ESC, BEL, other controls as names)
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x1b) out += 'ESC';
    else if (INVISIBLE.test(ch) || ch === '⟦' || ch === '⟧') out += `<${NAMES[cp] ?? hex(cp)}>`;
    else out += ch;
  }
  return out;
}

const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;
const WORD = /[\p{L}\p{M}\p{N}._\-@\u00AD\u200B-\u200D\u2060\uFEFF]+/gu;

function mixedScriptWords(command: string): string[] {
  const found: string[] = [];
  for (const m of command.matchAll(WORD)) {
    const w = m[0];
    if (LATIN.test(w) && LOOKALIKE.test(w) && !found.includes(w)) found.push(w);
  }
  return found;
}

/** The look-alike letters of a mixed word, named: `pаypal.com (а U+0430 Cyrillic)`. */
export function describeMixed(word: string): string {
  const foreign: string[] = [];
  for (const ch of word) {
    if (!LOOKALIKE.test(ch)) continue;
    const script = /\p{Script=Cyrillic}/u.test(ch)
      ? 'Cyrillic'
      : /\p{Script=Greek}/u.test(ch)
        ? 'Greek'
        : /\p{Script=Armenian}/u.test(ch)
          ? 'Armenian'
          : 'Cherokee';
    const d = `${ch} ${hex(ch.codePointAt(0)!)} ${script}`;
    if (!foreign.includes(d)) foreign.push(d);
  }
  const shown = [...word].map((ch) => (INVISIBLE.test(ch) ? `⟦${hex(ch.codePointAt(0)!)}⟧` : ch)).join('');
  return `${shown} (${foreign.join(', ')})`;
}

export function reveal(command: string): Revealed {
  const segments: Segment[] = [];
  let text = '';
  let hiddenCount = 0;
  const flush = () => {
    if (text) segments.push({ kind: 'text', text });
    text = '';
  };
  const mark = (raw: string, label: string, hidden: boolean, title: string) => {
    flush();
    segments.push({ kind: 'mark', raw, label, hidden, title });
    if (hidden) hiddenCount += 1;
  };

  let i = 0;
  let lineHasText = false;
  while (i < command.length) {
    const cp = command.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (ch === '\n') {
      flush();
      segments.push({ kind: 'newline' });
      lineHasText = false;
      i += 1;
      continue;
    }
    if (cp === 0x1b) {
      const seq = ESCAPE.exec(command.slice(i))![0];
      mark(seq, `⟦${printable(seq)}⟧`, true, 'ANSI escape sequence');
      i += seq.length;
      continue;
    }
    if (ch === ' ') {
      let j = i;
      while (command[j] === ' ') j += 1;
      const run = j - i;
      // a long run after text: shown as one counted token (indentation at the start of a line is shown as is)
      if (run >= SPACE_RUN && lineHasText) {
        mark(command.slice(i, j), `⟦${run} spaces⟧`, true, `${run} spaces`);
      } else {
        text += command.slice(i, j);
      }
      i = j;
      continue;
    }
    if (cp === 0x09) {
      mark(ch, '⟦TAB⟧', false, 'tab (U+0009)');
      i += 1;
      continue;
    }
    if (ch === '⟦' || ch === '⟧') {
      // a literal bracket in the command cannot pass for one of our tokens
      mark(ch, `⟦${hex(cp)}⟧`, false, `${hex(cp)} (a bracket used by these markers)`);
      lineHasText = true;
      i += 1;
      continue;
    }
    if (INVISIBLE.test(ch)) {
      const name = NAMES[cp];
      mark(ch, name && name.length <= 4 && cp < 0x80 ? `⟦${name}⟧` : `⟦${hex(cp)}⟧`, true, name ? `${hex(cp)} ${name}` : hex(cp));
      i += ch.length;
      continue;
    }
    text += ch;
    lineHasText = true;
    i += ch.length;
  }
  flush();

  const lineList = command.split('\n');
  const shown = segments.reduce(
    (acc, s) => {
      if (s.kind === 'newline') acc.push(0);
      else acc[acc.length - 1] += s.kind === 'text' ? [...s.text].length : [...s.label].length;
      return acc;
    },
    [0] as number[],
  );
  return {
    segments,
    hiddenCount,
    lines: lineList.length,
    mixedScripts: mixedScriptWords(command),
    rows: (cols: number) => shown.reduce((n, len) => n + Math.max(1, Math.ceil(len / Math.max(1, cols))), 0),
  };
}

/** The text a reader sees: what `segments` render to (tokens as their labels, newlines as newlines). */
export function revealedText(segments: Segment[]): string {
  return segments.map((s) => (s.kind === 'newline' ? '\n' : s.kind === 'text' ? s.text : s.label)).join('');
}
