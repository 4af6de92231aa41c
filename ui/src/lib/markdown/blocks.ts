import { Lexer, type Token, type Tokens } from 'marked';

export interface Block {
  /** Stable per position: earlier blocks keep their component while the tail grows. */
  key: string;
  token: Token;
}

const LEX_OPTIONS = { gfm: true, breaks: true } as const;

export function lex(src: string): Token[] {
  blockStats.lexedChars += src.length;
  return Lexer.lex(src, { ...LEX_OPTIONS }) as unknown as Token[];
}

/**
 * The top-level tokens of the last few texts split by a [`BlockSplitter`] (what the chat shows), so that reading a
 * final reply aloud walks the tokens the view already has instead of lexing 20 KB again on the main thread
 * (measured: 102 ms for the streaming bench's 20 KB reply, the longest task of the stream).
 */
const recent = new Map<string, Token[]>();
const RECENT_MAX = 8;

export function lexedTokens(text: string): Token[] | undefined {
  return recent.get(text);
}

function remember(text: string, blocks: Block[]): void {
  recent.delete(text);
  recent.set(
    text,
    blocks.map((b) => b.token),
  );
  while (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
}

/**
 * Splits a (streamed) message into top-level markdown blocks.
 *
 * Streaming sends the whole text so far on every edit. When the new text extends the previous one, the blocks
 * before the last one are kept as they were (same token objects) and only the tail is lexed again; any other
 * change re-lexes, but blocks whose source is unchanged still come back as the very same token objects
 * (memoized by source), so their components are not re-rendered.
 */
export class BlockSplitter {
  private text = '';
  private blocks: Block[] = [];
  private offsets: number[] = [];
  private memo = new Map<string, Token>();
  /** Characters lexed by the last update (for tests and diagnostics). */
  lastLexedChars = 0;

  update(text: string): Block[] {
    if (text === this.text) return this.blocks;
    let keep = 0;
    if (this.blocks.length > 0 && text.startsWith(this.text)) {
      // Re-lex from the last non-space block: it may grow (or merge with what follows).
      keep = this.blocks.length - 1;
      while (keep > 0 && this.blocks[keep].token.type === 'space') keep--;
    }
    const startOff = keep > 0 ? this.offsets[keep] : 0;
    const before = this.blocks;
    if (keep === 0) {
      this.blocks = [];
      this.offsets = [];
    }
    const tail = text.slice(startOff);
    this.lastLexedChars = tail.length;
    const tokens = lex(tail);
    const blocks = this.blocks.slice(0, keep);
    const offsets = this.offsets.slice(0, keep);
    let off = startOff;
    const memo = new Map<string, Token>();
    for (const tok of tokens) {
      const raw = tok.raw ?? '';
      const same = this.memo.get(raw) ?? share(before[blocks.length]?.token, tok);
      memo.set(raw, same);
      offsets.push(off);
      blocks.push({ key: `b${blocks.length}`, token: same });
      off += raw.length;
    }
    for (const b of blocks.slice(0, keep)) memo.set(b.token.raw ?? '', b.token);
    this.memo = memo;
    this.text = text;
    this.blocks = blocks;
    this.offsets = offsets;
    remember(text, blocks);
    return blocks;
  }
}

/**
 * `next` with the parts it has in common with `prev` (the same block before this edit) replaced by `prev`'s very
 * objects: a growing paragraph keeps its earlier inline tokens, so their components see no change and only the end
 * of the paragraph is rendered again. Tokens are never mutated after lexing, so sharing them is safe.
 */
function share(prev: Token | undefined, next: Token): Token {
  if (!prev || prev.type !== next.type) return next;
  if (prev.raw === next.raw) return prev;
  const p = (prev as { tokens?: Token[] }).tokens;
  const n = (next as { tokens?: Token[] }).tokens;
  if (p && n) for (let i = 0; i < n.length; i++) n[i] = share(p[i], n[i]);
  if (next.type === 'list' && prev.type === 'list') {
    const pi = (prev as Tokens.List).items;
    const ni = (next as Tokens.List).items;
    for (let i = 0; i < ni.length; i++) ni[i] = share(pi[i], ni[i]) as Tokens.ListItem;
  }
  return next;
}

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/** Links from agent text: only absolute http(s)/mailto URLs; everything else is shown as text. */
export function safeUrl(href: string | null | undefined): string | null {
  if (!href) return null;
  const trimmed = href.trim();
  // Control characters and whitespace inside the scheme are classic filter bypasses.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) return null;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return null;
  }
  if (!SAFE_PROTOCOLS.has(url.protocol)) return null;
  return url.href;
}

/** Block stats for tests: how many block components were created. */
export const blockStats = { created: 0, lexedChars: 0 };
