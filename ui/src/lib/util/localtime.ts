// The local wall clock, told from the time zone's offsets the shell hands the page (`window.__HERMES_HOST__`'s
// `utcOffsets`, src-tauri/src/boot.rs) instead of from `Date`'s local-time methods.
//
// Why: in WebKit, the first local-time call of a page (`getHours`, `getDate`, `new Date(y, m, d)`,
// `getTimezoneOffset`…) loads ICU's time zone and calendar data, ~1.5 MB of the web process for as long as it runs
// (the memory bench, bench/README.md). With the offsets known, the local time of an instant is the UTC time of
// the instant moved by its offset, which needs no ICU. Without them (the page outside the app, the unit tests), the
// `Date` methods answer as before.

/** `[from, offset]`: from the instant `from` (ms since the epoch) on, the wall clock is `offset` seconds ahead of UTC. */
type Offsets = readonly (readonly [number, number])[];

let table: Offsets | null = null;

/** Takes the shell's offsets; anything else than a non-empty list of number pairs, ascending, falls back to `Date`. */
export function setUtcOffsets(raw: unknown): void {
  table = null;
  if (!Array.isArray(raw) || raw.length === 0) return;
  let last = -Infinity;
  for (const p of raw) {
    if (!Array.isArray(p) || p.length !== 2 || !Number.isFinite(p[0]) || !Number.isFinite(p[1]) || p[0] <= last) return;
    last = p[0];
  }
  table = raw as Offsets;
}

/** Seconds the wall clock is ahead of UTC at the instant `ms`. */
export function utcOffsetSeconds(ms: number): number {
  const t = table;
  if (!t) return -new Date(ms).getTimezoneOffset() * 60;
  // the last pair whose `from` is at or before `ms`
  let lo = 0;
  let hi = t.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (t[mid][0] <= ms) lo = mid;
    else hi = mid - 1;
  }
  return t[lo][1];
}

export interface LocalParts {
  year: number;
  /** 0–11, as `Date.getMonth()`. */
  month: number;
  day: number;
  /** Sunday = 0, as `Date.getDay()`. */
  weekday: number;
  hours: number;
  minutes: number;
}

/** The local date and time of the instant `ms`. */
export function localParts(ms: number): LocalParts {
  const d = new Date(ms + utcOffsetSeconds(ms) * 1000);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth(),
    day: d.getUTCDate(),
    weekday: d.getUTCDay(),
    hours: d.getUTCHours(),
    minutes: d.getUTCMinutes(),
  };
}

/**
 * The instant the local day `year`-`month`-`day` starts (`month` 0-based; `day` may run over, as with `Date`):
 * its midnight, or, where a clock change skips midnight, the first instant of the day.
 */
export function localDayStart(year: number, month: number, day: number): number {
  const wall = Date.UTC(year, month, day);
  // the offset at a first guess, then at the instant it gives (they differ when a change lies between the two)
  const guess = wall - utcOffsetSeconds(wall) * 1000;
  const at = wall - utcOffsetSeconds(guess) * 1000;
  // a midnight that does not exist (the clock jumped from 23:59 to 01:00): the day starts at the jump
  if (localParts(at).day !== new Date(wall).getUTCDate()) return Math.max(at, guess);
  return at;
}
