import type { Locale } from './index.svelte';
import type { LocalParts } from '../util/localtime';

// Date labels and plural categories for the app's three languages, written out instead of asked of `Intl`.
//
// Why: the first `Intl` object a WebKit page builds (any of them: DateTimeFormat, PluralRules, NumberFormat) costs
// ~11 ms of its main thread, once, for ICU's locale set-up (measured with a JavaScriptCore context on this machine's
// ICU 72: `bench/README.md`), and the first bubble's time label paid it on every launch. The output is
// the same as `Intl`'s for these locales (CLDR data: the time as `hour: 'numeric', minute: '2-digit'` — the locale's own hour style, `9:05 AM`, not `09:05 AM`, the day as
// `weekday: 'long', day: 'numeric', month: 'long'` with an optional `year: 'numeric'`); `src/test/format.test.ts`
// compares them with `Intl` for every minute of a day, every day of two years and the counts 0–1,000 (plus
// fractions), so a difference fails the build.

interface DateNames {
  /** January first; the form used after a day number (Russian: genitive). */
  months: readonly string[];
  /** Sunday first, as `LocalParts.weekday`. */
  weekdays: readonly string[];
}

const NAMES: Record<Locale, DateNames> = {
  en: {
    months: [
      'January',
      'February',
      'March',
      'April',
      'May',
      'June',
      'July',
      'August',
      'September',
      'October',
      'November',
      'December',
    ],
    weekdays: ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'],
  },
  ru: {
    months: [
      'января',
      'февраля',
      'марта',
      'апреля',
      'мая',
      'июня',
      'июля',
      'августа',
      'сентября',
      'октября',
      'ноября',
      'декабря',
    ],
    weekdays: ['воскресенье', 'понедельник', 'вторник', 'среда', 'четверг', 'пятница', 'суббота'],
  },
  zh: {
    months: ['1月', '2月', '3月', '4月', '5月', '6月', '7月', '8月', '9月', '10月', '11月', '12月'],
    weekdays: ['星期日', '星期一', '星期二', '星期三', '星期四', '星期五', '星期六'],
  },
};

const two = (n: number): string => String(n).padStart(2, '0');

/** A local time (`../util/localtime.ts`) as a chat timestamp: `9:05 AM` (en), `9:05` / `21:05` (ru, zh). */
export function timeLabel(locale: Locale, time: Pick<LocalParts, 'hours' | 'minutes'>): string {
  const h = time.hours;
  const m = two(time.minutes);
  if (locale === 'en') return `${h % 12 === 0 ? 12 : h % 12}:${m} ${h < 12 ? 'AM' : 'PM'}`;
  return `${h}:${m}`;
}

/** A local day (`../util/localtime.ts`) for a day separator, with its year when `withYear`. */
export function dayLabel(locale: Locale, date: Omit<LocalParts, 'hours' | 'minutes'>, withYear: boolean): string {
  const { months, weekdays } = NAMES[locale];
  const day = date.day;
  const month = months[date.month];
  const weekday = weekdays[date.weekday];
  const year = date.year;
  switch (locale) {
    case 'en':
      return `${weekday}, ${month} ${day}${withYear ? `, ${year}` : ''}`;
    case 'ru':
      return `${weekday}, ${day} ${month}${withYear ? ` ${year} г.` : ''}`;
    case 'zh':
      return `${withYear ? `${year}年` : ''}${month}${day}日${weekday}`;
  }
}

export type PluralCategory = 'zero' | 'one' | 'two' | 'few' | 'many' | 'other';

/** CLDR's cardinal plural category of `n` (what `new Intl.PluralRules(locale).select(n)` answers). */
export function pluralCategory(locale: Locale, n: number): PluralCategory {
  const integer = Number.isInteger(n);
  const i = Math.trunc(Math.abs(n));
  switch (locale) {
    case 'en':
      return integer && i === 1 ? 'one' : 'other';
    case 'ru': {
      if (!integer) return 'other';
      const d = i % 10;
      const h = i % 100;
      if (d === 1 && h !== 11) return 'one';
      if (d >= 2 && d <= 4 && (h < 12 || h > 14)) return 'few';
      return 'many';
    }
    case 'zh':
      return 'other';
  }
}
