import { afterEach, describe, expect, it } from 'vitest';
import { formatDay, formatTime } from '../lib/util/format';
import { setLocale, tn } from '../lib/i18n/index.svelte';

// The formatters are kept per locale and style (building one per bubble cost milliseconds in WebKit): they must
// still say exactly what the one-off calls said, and follow a change of language.
describe('kept date formatters', () => {
  afterEach(() => setLocale('en'));

  it('match toLocale*String for each locale, and follow a locale change', () => {
    const at = new Date(new Date().getFullYear(), 10, 30, 9, 5).getTime();
    for (const locale of ['en', 'ru', 'zh'] as const) {
      setLocale(locale);
      expect(formatTime(at)).toBe(new Date(at).toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' }));
    }
    setLocale('en');
    const en = formatDay(at);
    setLocale('ru');
    expect(formatDay(at)).not.toBe(en);
    expect(formatDay(at)).toBe(new Date(at).toLocaleDateString('ru', { weekday: 'long', day: 'numeric', month: 'long' }));
  });

  it('names the year only for another year than this one', () => {
    setLocale('en');
    const thisYear = new Date(new Date().getFullYear(), 0, 15).getTime();
    const lastYear = new Date(new Date().getFullYear() - 1, 0, 15).getTime();
    expect(formatDay(thisYear)).not.toMatch(String(new Date().getFullYear()));
    expect(formatDay(lastYear)).toMatch(String(new Date().getFullYear() - 1));
    expect(formatDay(lastYear)).toBe(
      new Date(lastYear).toLocaleDateString('en', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }),
    );
  });

  it('plural forms per locale still follow the language', () => {
    setLocale('ru');
    const few = tn('banner.queued', 3);
    const one = tn('banner.queued', 21);
    expect(few).toMatch(/сообщения/);
    expect(one).not.toBe(few);
  });
});
