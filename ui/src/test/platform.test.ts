import { describe, expect, it } from 'vitest';
import { platformName } from '../lib/util/format';

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
