import { describe, expect, it } from 'vitest';
import { platformName, uiFontState } from '../lib/util/format';

// app.css picks cheaper font stacks for WebKitGTK by this name (see the comment there).
describe('platformName', () => {
  it('tells the three desktops apart by their webview user agents', () => {
    expect(
      platformName('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15'),
    ).toBe('linux');
    expect(
      platformName(
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0',
      ),
    ).toBe('windows');
    expect(
      platformName('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko)'),
    ).toBe('mac');
    expect(platformName('')).toBe('other');
  });
});

// app.css leaves `system-ui` out where the shell found its font missing (src-tauri/src/fonts.rs).
describe('uiFontState', () => {
  it('is missing only on Linux and only when the shell said so', () => {
    expect(uiFontState('linux', { uiFontMissing: true })).toBe('missing');
    expect(uiFontState('linux', { uiFontMissing: false })).toBeNull();
    expect(uiFontState('linux', { uiFontMissing: 'yes' })).toBeNull();
    expect(uiFontState('linux', undefined)).toBeNull();
    expect(uiFontState('linux', null)).toBeNull();
    expect(uiFontState('mac', { uiFontMissing: true })).toBeNull();
  });

  it('app.css then goes straight to sans-serif on Linux', async () => {
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const css = readFileSync(join(__dirname, '..', 'app.css'), 'utf8');
    expect(css).toMatch(/:root\[data-platform='linux'\]\[data-ui-font='missing'\]\s*\{\s*--font-sans: sans-serif;/);
  });
});
