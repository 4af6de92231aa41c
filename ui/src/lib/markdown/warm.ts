import { mount, unmount } from 'svelte';
import Markdown from './Markdown.svelte';

/** Every kind of block and inline style a reply can show: headings, emphasis, code (inline, in italic and bold, in
 *  a block), lists, a quote, a table. The code block names no language: the warm-up never loads the code highlighter,
 *  which holds ~2–3 MB of the web process until a reply shows code (the memory bench, bench/README.md); the
 *  one style of its own that needs another font face, a comment's monospace italic, is added by hand below. */
export const TYPE_SAMPLE = [
  '# Heading one',
  '## Heading two',
  '### Heading three',
  '#### Heading four',
  'Text with **bold**, *italic*, ***both***, ~~struck~~, `inline code` and a [link](https://example.com).',
  '- item\n  - nested item\n\n1. first\n2. second',
  '> a quote with **bold**',
  '| a | b |\n| --- | --- |\n| 1 | **2** |',
  'Code in *`italic`* and **`bold`**.',
  '```\nfn main() {}\n```',
].join('\n\n');

/**
 * The first time a reply uses a font face at a size — a heading, bold, a code block — WebKit asks the system for it
 * (on Linux, fontconfig tries each family of the stack in turn) inside the frame that first shows it: in a streamed
 * reply, a stall where the first `## Section` or code block arrives. This lays out every style once, out of sight,
 * in an idle moment after the launch, so that work is done before a reply needs it. `context`: the app's Svelte
 * contexts (links need the backend).
 */
export function warmTypography(context?: Map<unknown, unknown>, frames = 2): Promise<void> {
  const host = document.createElement('div');
  host.setAttribute('aria-hidden', 'true');
  host.className = 'type-warmup';
  // Laid out and painted (fonts are chosen at layout, glyphs rasterised at paint) but invisible and inert.
  host.style.cssText =
    'position:fixed;left:0;top:0;width:560px;opacity:0.001;pointer-events:none;z-index:-1;contain:layout paint;';
  host.inert = true;
  document.body.appendChild(host);
  const view = mount(Markdown, { target: host, props: { text: TYPE_SAMPLE }, context });
  // highlighted code's comment style (app.css `.hljs-comment`: monospace italic) in the code block
  const comment = document.createElement('span');
  comment.className = 'hljs-comment';
  comment.textContent = '// a comment';
  host.querySelector('pre code')?.append('\n', comment);
  return new Promise((resolve) => {
    let left = frames;
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      clearTimeout(fallback);
      void unmount(view);
      host.remove();
      resolve();
    };
    // a hidden window gets no frames: never leave the sample behind
    const fallback = setTimeout(end, 1500);
    const step = () => {
      if (--left > 0) requestAnimationFrame(step);
      else end();
    };
    requestAnimationFrame(step);
  });
}
