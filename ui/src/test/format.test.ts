import { afterEach, describe, expect, it } from 'vitest';
import { formatDay, formatTime } from '../lib/util/format';
import { setLocale, tn, type Locale } from '../lib/i18n/index.svelte';
import { dayLabel, pluralCategory, timeLabel } from '../lib/i18n/dates';

const LOCALES: Locale[] = ['en', 'ru', 'zh'];

// The labels are written out instead of asked of `Intl` (its first use cost ~11 ms of every launch in WebKit): they
// must say exactly what `Intl` says for the app's languages. Node's ICU is the reference.
describe('date labels and plural categories without Intl', () => {
  it('the time of every minute of a day is Intl\'s', () => {
    for (const locale of LOCALES) {
      const ref = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' });
      for (let minute = 0; minute < 24 * 60; minute++) {
        const d = new Date(2026, 2, 14, Math.floor(minute / 60), minute % 60, 30);
        expect(timeLabel(locale, d), `${locale} ${d.toString()}`).toBe(ref.format(d));
      }
    }
  });

  it('every day of two years, with and without the year, is Intl\'s', () => {
    for (const locale of LOCALES) {
      const day = new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long' });
      const dayYear = new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
      for (let i = 0; i < 731; i++) {
        const d = new Date(2025, 0, 1 + i, 13, 0);
        expect(dayLabel(locale, d, false), `${locale} ${d.toString()}`).toBe(day.format(d));
        expect(dayLabel(locale, d, true), `${locale} ${d.toString()}`).toBe(dayYear.format(d));
      }
    }
  });

  it('the plural category of 0–1,000 and of fractions is Intl\'s', () => {
    for (const locale of LOCALES) {
      const ref = new Intl.PluralRules(locale);
      for (const n of [...Array.from({ length: 1001 }, (_, i) => i), 0.5, 1.5, 2.25, 11.1, 21.5, 1e6, 1e6 + 1]) {
        expect(pluralCategory(locale, n), `${locale} ${n}`).toBe(ref.select(n));
      }
    }
  });
});

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
