import { afterEach, describe, expect, it, vi } from 'vitest';
import { screen, waitFor } from '@testing-library/svelte';
import { chatLog, ready, renderApp } from './helpers';
import { formatClipLength, formatDateTime, formatDay, formatDuration, formatTime, untilMidnight } from '../lib/util/format';
import { setLocale, tn, type Locale } from '../lib/i18n/index.svelte';
import { dayLabel, pluralCategory, timeLabel } from '../lib/i18n/dates';
import { localParts } from '../lib/util/localtime';

const LOCALES: Locale[] = ['en', 'ru', 'zh'];

// The labels are written out instead of asked of `Intl` (its first use cost ~11 ms of every launch in WebKit): they
// must say exactly what `Intl` says for the app's languages. Node's ICU is the reference.
describe('date labels and plural categories without Intl', () => {
  it('the time of every minute of a day is Intl\'s', () => {
    for (const locale of LOCALES) {
      const ref = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' });
      for (let minute = 0; minute < 24 * 60; minute++) {
        const d = new Date(2026, 2, 14, Math.floor(minute / 60), minute % 60, 30);
        expect(timeLabel(locale, localParts(d.getTime())), `${locale} ${d.toString()}`).toBe(ref.format(d));
      }
    }
  });

  it('every day of two years, with and without the year, is Intl\'s', () => {
    for (const locale of LOCALES) {
      const day = new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long' });
      const dayYear = new Intl.DateTimeFormat(locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' });
      for (let i = 0; i < 731; i++) {
        const d = new Date(2025, 0, 1 + i, 13, 0);
        expect(dayLabel(locale, localParts(d.getTime()), false), `${locale} ${d.toString()}`).toBe(day.format(d));
        expect(dayLabel(locale, localParts(d.getTime()), true), `${locale} ${d.toString()}`).toBe(dayYear.format(d));
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
    const now = new Date(2026, 5, 20, 12, 0).getTime();
    const at = new Date(2026, 2, 3, 9, 5).getTime();
    for (const locale of ['en', 'ru', 'zh'] as const) {
      setLocale(locale);
      expect(formatTime(at)).toBe(new Date(at).toLocaleTimeString(locale, { hour: 'numeric', minute: '2-digit' }));
    }
    setLocale('en');
    const en = formatDay(at, now);
    setLocale('ru');
    expect(formatDay(at, now)).not.toBe(en);
    expect(formatDay(at, now)).toBe(
      new Date(at).toLocaleDateString('ru', { weekday: 'long', day: 'numeric', month: 'long' }),
    );
  });

  it('names the year only for another year than this one', () => {
    setLocale('en');
    const now = new Date(2026, 5, 20, 12, 0).getTime();
    const thisYear = new Date(2026, 0, 15).getTime();
    const lastYear = new Date(2025, 0, 15).getTime();
    expect(formatDay(thisYear, now)).toBe('Thursday, January 15');
    expect(formatDay(lastYear, now)).toBe('Wednesday, January 15, 2025');
  });

  it('says Today and Yesterday, in the language, by the local calendar day', () => {
    setLocale('en');
    const now = new Date(2026, 2, 1, 0, 30).getTime(); // half past midnight, 1 March
    expect(formatDay(new Date(2026, 2, 1, 0, 0).getTime(), now)).toBe('Today');
    expect(formatDay(new Date(2026, 1, 28, 23, 59).getTime(), now)).toBe('Yesterday'); // across a month end
    expect(formatDay(new Date(2026, 1, 27, 23, 59).getTime(), now)).toBe('Friday, February 27');
    expect(formatDay(new Date(2026, 2, 2, 9, 0).getTime(), now)).toBe('Monday, March 2'); // a clock set back: not "Today"
    setLocale('ru');
    expect(formatDay(now, now)).toBe('Сегодня');
    setLocale('zh');
    expect(formatDay(new Date(2026, 1, 28).getTime(), now)).toBe('昨天');
    // New Year's Day: yesterday is in the year before
    setLocale('en');
    expect(formatDay(new Date(2025, 11, 31, 22).getTime(), new Date(2026, 0, 1, 8).getTime())).toBe('Yesterday');
  });

  it("a timestamp's tooltip has the full date and time", () => {
    const at = new Date(2026, 11, 1, 9, 5).getTime();
    setLocale('en');
    expect(formatDateTime(at)).toBe('Tuesday, December 1, 2026, 9:05 AM');
    setLocale('ru');
    expect(formatDateTime(at)).toBe('вторник, 1 декабря 2026 г., 9:05');
    setLocale('zh');
    expect(formatDateTime(at)).toBe('2026年12月1日星期二 9:05');
  });

  it('counts the time until the next local midnight', () => {
    expect(untilMidnight(new Date(2026, 2, 1, 23, 59, 30).getTime())).toBe(30_000);
    expect(untilMidnight(new Date(2026, 2, 1, 0, 0, 0).getTime())).toBe(24 * 3600_000);
  });

  it('plural forms per locale still follow the language', () => {
    setLocale('ru');
    const few = tn('banner.queued', 3);
    const one = tn('banner.queued', 21);
    expect(few).toMatch(/сообщения/);
    expect(one).not.toBe(few);
  });
});

describe('day separators in the chat', () => {
  afterEach(() => vi.useRealTimers());

  it('"Today" becomes "Yesterday" at midnight without anything else happening', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date(2026, 2, 1, 23, 59, 59, 500));
    const ipc = await renderApp();
    await ready(ipc);
    ipc.emit({ event: 'message', id: 'r1', text: 'late reply', final: true });
    await chatLog().findByText('late reply');
    const day = () => document.querySelector('.day')?.textContent?.trim();
    await waitFor(() => expect(day()).toBe('Today'));
    vi.setSystemTime(new Date(2026, 2, 2, 0, 0, 1));
    await waitFor(() => expect(day()).toBe('Yesterday'), { timeout: 5000 });
  });
});

describe('lengths and countdowns', () => {
  it('a recording shows its length to the nearest second, never 0:00 when it has sound', () => {
    expect(formatClipLength(0.44)).toBe('0:01');
    expect(formatClipLength(2.96)).toBe('0:03');
    expect(formatClipLength(3.4)).toBe('0:03');
    expect(formatClipLength(59.6)).toBe('1:00');
    expect(formatClipLength(3725)).toBe('1:02:05');
    for (const nothing of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(formatClipLength(nothing)).toBe('0:00');
  });

  it('a position or a countdown counts whole seconds down', () => {
    expect(formatDuration(2.96)).toBe('0:02');
    expect(formatDuration(61.5)).toBe('1:01');
    expect(formatDuration(-3)).toBe('0:00');
  });
});
