import { describe, expect, it } from 'vitest';
import { speechText } from '../lib/markdown/speech';
import { BlockSplitter, blockStats } from '../lib/markdown/blocks';

// what is read aloud and shown in the avatar's bubble is the reply's words, not its markdown.
describe('speechText', () => {
  it('drops emphasis markers, backticks and link targets', () => {
    expect(speechText('Hermes can **stream** a reply with `inline code` and a [link](https://example.com/x).')).toBe(
      'Hermes can stream a reply with inline code and a link.',
    );
  });

  it('mentions a code block instead of reading it', () => {
    const s = speechText('Here:\n\n```rust\nfn main() { println!("hi"); }\n```\n\nDone.', 'code');
    expect(s).toBe('Here:\n(code)\nDone.');
    expect(s).not.toContain('println');
  });

  it('reads lists and headings as lines, tables as rows', () => {
    expect(speechText('# Title\n\n- one\n- **two**\n\n| a | b |\n|---|---|\n| 1 | 2 |')).toBe(
      'Title\none\ntwo\na, b.\n1, 2.',
    );
  });

  it('keeps hostile text as text (it is spoken, never run)', () => {
    expect(speechText('a <b>bold</b> & "quoted" </script> \\ end')).toContain('& "quoted"');
  });

  it('gives nothing to say for an empty or markup-only reply', () => {
    expect(speechText('')).toBe('');
    expect(speechText('---')).toBe('');
  });

  it('walks the tokens the chat view already lexed for that text instead of lexing it again', () => {
    let text = '';
    for (let i = 0; i < 40; i++) text += `Paragraph ${i} with **bold** and \`code\`.\n\n- item\n\n\`\`\`js\nx()\n\`\`\`\n\n`;
    const fresh = speechText(text, 'code'); // nothing cached for it: lexed here
    const splitter = new BlockSplitter();
    for (let cut = 100; cut < text.length; cut += 100) splitter.update(text.slice(0, cut)); // streamed
    splitter.update(text);
    const before = blockStats.lexedChars;
    expect(speechText(text, 'code')).toBe(fresh);
    expect(blockStats.lexedChars).toBe(before);
    // a text the view never showed is still lexed
    expect(speechText(text + 'More.', 'code')).toBe(fresh + '\nMore.');
    expect(blockStats.lexedChars).toBeGreaterThan(before);
  });
});
