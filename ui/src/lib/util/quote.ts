/** `text` as a Markdown quote ("> " before each line; CRLF and CR read as line ends; blank edges dropped). */
export function quoteBlock(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').replace(/^\s*\n|\n\s*$/g, '').split('\n');
  return lines.map((l) => (l.trim() ? `> ${l}` : '>')).join('\n');
}

/** The composer's text with `quoted` as a quote above what was typed (a blank line between, and after it when
 *  nothing was typed yet, for the question). */
export function withQuote(quoted: string, typed: string): string {
  const q = quoteBlock(quoted);
  return typed.trim() ? `${q}\n\n${typed}` : `${q}\n\n`;
}

/** `line` on a line of its own above what was typed (once: a line already there is not repeated). */
export function withLine(line: string, typed: string): string {
  const l = line.replace(/\s+/g, ' ').trim();
  if (!l || typed.split('\n').includes(l)) return typed;
  return typed ? `${l}\n${typed}` : `${l}\n`;
}
