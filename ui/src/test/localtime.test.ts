import { afterEach, describe, expect, it } from 'vitest';
import { localDayStart, localParts, setUtcOffsets, utcOffsetSeconds } from '../lib/util/localtime';
import { dayKey, formatDay, formatTime, untilMidnight } from '../lib/util/format';

// The page tells local time from the shell's offset table (src-tauri/src/boot.rs `utc_offsets`) instead of `Date`'s
// local-time methods, which load ICU's zone data in WebKit. Node's ICU, asked for the same zone by name, is the
// reference: the table is built here from it the way the shell builds it from the system's TZif data.

const HOUR = 3_600_000;

/** Seconds `zone`'s wall clock is ahead of UTC at `ms`, from Intl ("GMT-04:00"). */
const formats = new Map<string, Intl.DateTimeFormat>();
function format(key: string, make: () => Intl.DateTimeFormat): Intl.DateTimeFormat {
  let f = formats.get(key);
  if (!f) formats.set(key, (f = make()));
  return f;
}

function intlOffset(zone: string, ms: number): number {
  const name = format(`offset ${zone}`, () => new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' }))
    .formatToParts(ms)
    .find((p) => p.type === 'timeZoneName')!.value;
  const m = /GMT(?:([+-])(\d\d):(\d\d))?/.exec(name)!;
  return m[1] ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
}

/** `[from, offset]` pairs for `zone` over [from, to): hourly, each change narrowed to the millisecond. */
function tableFor(zone: string, from: number, to: number): [number, number][] {
  const out: [number, number][] = [[-8.64e15, intlOffset(zone, from)]];
  for (let t = from; t < to; t += HOUR) {
    const next = intlOffset(zone, t + HOUR);
    if (next === out[out.length - 1][1]) continue;
    let lo = t;
    let hi = t + HOUR; // offset(lo) is the old one, offset(hi) the new
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (intlOffset(zone, mid) === next) hi = mid;
      else lo = mid;
    }
    out.push([hi, next]);
  }
  return out;
}

function intlParts(zone: string, ms: number) {
  const parts = format(
    `parts ${zone}`,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        weekday: 'short',
        hour: 'numeric',
        minute: 'numeric',
      }),
  ).formatToParts(ms);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return {
    year: Number(get('year')),
    month: Number(get('month')) - 1,
    day: Number(get('day')),
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(get('weekday')),
    hours: Number(get('hour')),
    minutes: Number(get('minute')),
  };
}

/** The first quarter hour of `zone`'s local day y-m-d (clocks change on quarter hours), by walking around it. */
function firstQuarterOf(zone: string, y: number, m: number, d: number): number {
  const wall = Date.UTC(y, m, d);
  for (let t = wall - 16 * HOUR; t < wall + 16 * HOUR; t += 15 * 60_000) {
    const p = intlParts(zone, t);
    if (p.year === y && p.month === m && p.day === d) return t;
  }
  throw new Error('no such day');
}

const FROM = Date.UTC(2025, 0, 1);
const TO = Date.UTC(2027, 0, 1);

describe('local time from the shell\'s offsets', () => {
  afterEach(() => setUtcOffsets(undefined));

  it('agrees with Intl in a zone with daylight saving time, through both changes of two years', () => {
    const zone = 'America/New_York';
    setUtcOffsets(tableFor(zone, FROM - 24 * HOUR, TO + 24 * HOUR));
    for (let t = FROM; t < TO; t += 37 * 60_000) expect(localParts(t), new Date(t).toISOString()).toEqual(intlParts(zone, t));
    // the hour around each change, minute by minute
    for (const change of [Date.UTC(2026, 2, 8, 7), Date.UTC(2026, 10, 1, 6)]) {
      for (let t = change - HOUR; t < change + HOUR; t += 60_000) expect(localParts(t)).toEqual(intlParts(zone, t));
    }
    expect(utcOffsetSeconds(Date.UTC(2026, 6, 1))).toBe(-4 * 3600);
    expect(utcOffsetSeconds(Date.UTC(2026, 11, 1))).toBe(-5 * 3600);
  });

  it('finds the start of each day, also where a change skips or repeats midnight', () => {
    // Santiago moves its clocks at midnight (2026-09-06 00:00 → 01:00; 2026-04-05 00:00 → 23:00 the day before)
    for (const zone of ['America/New_York', 'America/Santiago', 'Asia/Kolkata']) {
      setUtcOffsets(tableFor(zone, FROM - 24 * HOUR, TO + 24 * HOUR));
      for (let day = Date.UTC(2026, 0, 1); day < Date.UTC(2027, 0, 1); day += 24 * HOUR) {
        const d = new Date(day);
        const [y, m, dd] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()];
        expect(localDayStart(y, m, dd), `${zone} ${y}-${m + 1}-${dd}`).toBe(firstQuarterOf(zone, y, m, dd));
      }
    }
  });

  it('drives the chat\'s labels: time, day keys, Today and Yesterday, the next midnight', () => {
    setUtcOffsets(tableFor('America/New_York', FROM, TO));
    // 2026-03-08 03:30 UTC is 22:30 on March 7 in New York (EST), the night before clocks spring forward
    const late = Date.UTC(2026, 2, 8, 3, 30);
    expect(formatTime(late)).toBe('10:30 PM');
    expect(dayKey(late)).toBe('2026-2-7');
    const nextMorning = Date.UTC(2026, 2, 8, 14); // 10:00 EDT on March 8
    expect(formatDay(late, nextMorning)).toBe('Yesterday');
    expect(formatDay(nextMorning, nextMorning)).toBe('Today');
    // from 22:30 EST to the next midnight: 1 h 30 min of wall clock, but the night is an hour shorter
    expect(untilMidnight(late)).toBe(1.5 * HOUR);
    expect(untilMidnight(Date.UTC(2026, 2, 8, 4, 0))).toBe(HOUR); // 23:00 EST
    expect(untilMidnight(Date.UTC(2026, 2, 8, 5, 0))).toBe(23 * HOUR); // 00:00 EST, March 8: a 23-hour day
  });

  it('falls back to Date\'s local time for a missing or malformed table', () => {
    const t = Date.UTC(2026, 5, 15, 12);
    const fromDate = -new Date(t).getTimezoneOffset() * 60;
    for (const bad of [undefined, null, [], [[0]], [[0, 'x']], [[5, 0], [1, 3600]], 'table', [[0, Infinity]]]) {
      setUtcOffsets([[-8.64e15, 12_345]]);
      setUtcOffsets(bad);
      expect(utcOffsetSeconds(t), JSON.stringify(bad)).toBe(fromDate);
    }
    setUtcOffsets([[-8.64e15, 3600]]);
    expect(localParts(Date.UTC(2026, 5, 15, 23, 30))).toMatchObject({ day: 16, hours: 0, minutes: 30 });
  });
});
