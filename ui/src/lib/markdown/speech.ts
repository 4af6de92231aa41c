import type { Token, Tokens } from 'marked';
import { lex, lexedTokens } from './blocks';

/**
 * A reply's markdown as text to say aloud and to show in the avatar's speech bubble: the words only —
 * no `**`, backticks, link targets or table pipes. Code blocks are not read character by character: they become a
 * short mention, as a person reading the reply would do.
 */
export function speechText(markdown: string, codeWord = 'code'): string {
  const parts: string[] = [];
  walk(lexedTokens(markdown) ?? lex(markdown), parts, codeWord);
  return parts
    .join('')
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{2,}/g, '\n')
    .trim();
}

function walk(tokens: Token[] | undefined, out: string[], codeWord: string): void {
  for (const t of tokens ?? []) {
    switch (t.type) {
      case 'code':
        out.push(`(${codeWord})\n`);
        break;
      case 'codespan':
        out.push((t as Tokens.Codespan).text);
        break;
      case 'image':
        out.push((t as Tokens.Image).text);
        break;
      case 'br':
        out.push('\n');
        break;
      case 'hr':
      case 'space':
      case 'html':
        out.push('\n');
        break;
      case 'table': {
        const tbl = t as Tokens.Table;
        for (const row of [tbl.header, ...tbl.rows]) {
          const cells: string[] = [];
          for (const c of row) {
            const p: string[] = [];
            walk(c.tokens, p, codeWord);
            cells.push(p.join('').trim());
          }
          out.push(cells.filter(Boolean).join(', ') + '.\n');
        }
        break;
      }
      case 'list': {
        for (const item of (t as Tokens.List).items) {
          walk(item.tokens, out, codeWord);
          out.push('\n');
        }
        break;
      }
      case 'heading':
      case 'paragraph':
      case 'blockquote':
        walk((t as Tokens.Paragraph).tokens, out, codeWord);
        out.push('\n');
        break;
      case 'text':
      case 'strong':
      case 'em':
      case 'del':
      case 'link': {
        const withKids = t as Tokens.Text;
        if (withKids.tokens && withKids.tokens.length) walk(withKids.tokens, out, codeWord);
        else out.push(decode(withKids.text));
        break;
      }
      case 'escape':
        out.push((t as Tokens.Escape).text);
        break;
      default: {
        const anyT = t as { tokens?: Token[]; text?: string };
        if (anyT.tokens) walk(anyT.tokens, out, codeWord);
        else if (typeof anyT.text === 'string') out.push(decode(anyT.text));
      }
    }
  }
}

/** marked keeps entities such as `&amp;` in text tokens; speech wants the characters. */
function decode(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}
