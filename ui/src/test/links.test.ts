// Links never open in the app: no `target`, and every way of following one (click, Ctrl/Cmd/Shift-click, middle
// click, Enter) goes through the shell's open_external, which re-checks the link and opens the system browser.
import { describe, expect, it, vi } from 'vitest';
import { render } from '@testing-library/svelte';
import Harness from './MarkdownHarness.svelte';

function link(openExternal: () => Promise<void>) {
  const r = render(Harness, { props: { text: 'See [docs](https://example.com/docs) and <b>x</b>.', openExternal } });
  return r.container.querySelector('a') as HTMLAnchorElement;
}

describe('links in replies', () => {
  it('have no target: nothing can open in a new in-app window', () => {
    const a = link(async () => {});
    expect(a.hasAttribute('target')).toBe(false);
    expect(a.getAttribute('rel')).toContain('noopener');
  });

  it.each([
    ['a click', 'click', {}],
    ['Ctrl-click', 'click', { ctrlKey: true }],
    ['Cmd-click', 'click', { metaKey: true }],
    ['Shift-click', 'click', { shiftKey: true }],
    ['a middle click', 'auxclick', { button: 1 }],
  ] as const)('%s opens the link through open_external and never navigates', (_name, type, init) => {
    const openExternal = vi.fn(async () => {});
    const a = link(openExternal);
    const ev = new MouseEvent(type, { bubbles: true, cancelable: true, ...init });
    a.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(true);
    expect(openExternal).toHaveBeenCalledTimes(1);
    expect(openExternal).toHaveBeenCalledWith('https://example.com/docs');
  });

  it('a middle press does not start autoscroll; a right click opens nothing', () => {
    const openExternal = vi.fn(async () => {});
    const a = link(openExternal);
    const down = new MouseEvent('mousedown', { bubbles: true, cancelable: true, button: 1 });
    a.dispatchEvent(down);
    expect(down.defaultPrevented).toBe(true);
    const right = new MouseEvent('auxclick', { bubbles: true, cancelable: true, button: 2 });
    a.dispatchEvent(right);
    expect(right.defaultPrevented).toBe(false);
    expect(openExternal).not.toHaveBeenCalled();
  });
});
