import { currentLocale, t } from '../i18n/index.svelte';
import { dayLabel, timeLabel } from '../i18n/dates';
import { localDayStart, localParts } from './localtime';

const UNITS = ['B', 'KB', 'MB', 'GB'];

export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '?';
  let i = 0;
  let v = n;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${UNITS[i]}`;
}

// Time and day labels are written out per locale (`../i18n/dates.ts`): the first `Intl` object of the page cost
// ~11 ms of WebKit's main thread at every launch. The local time comes from `./localtime.ts` (see there why).

export function formatTime(ms: number): string {
  return timeLabel(currentLocale(), localParts(ms));
}

/** A day separator's label: "Today", "Yesterday", else the day (with its year when not this year's). */
export function formatDay(ms: number, now: number = Date.now()): string {
  const d = localParts(ms);
  const today = localParts(now);
  const key = dayKey(ms);
  if (key === dayKey(now)) return t('chat.today');
  if (key === dayKey(localDayStart(today.year, today.month, today.day - 1))) return t('chat.yesterday');
  return dayLabel(currentLocale(), d, d.year !== today.year);
}

/** The full date and time, for a timestamp's tooltip: "Tuesday, December 1, 2026, 9:05 AM". */
export function formatDateTime(ms: number): string {
  const locale = currentLocale();
  const d = localParts(ms);
  return `${dayLabel(locale, d, true)}${locale === 'zh' ? ' ' : ', '}${timeLabel(locale, d)}`;
}

/** Milliseconds from `now` until the next local midnight (when "Today" becomes "Yesterday"). */
export function untilMidnight(now: number = Date.now()): number {
  const d = localParts(now);
  return localDayStart(d.year, d.month, d.day + 1) - now;
}

export function dayKey(ms: number): string {
  const d = localParts(ms);
  return `${d.year}-${d.month}-${d.day}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '0:00';
  const s = Math.floor(seconds % 60);
  const m = Math.floor(seconds / 60) % 60;
  const h = Math.floor(seconds / 3600);
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * A recording's whole length, as a player shows it: to the nearest second (a 2.96 s voice note is "0:03", as long as
 * the agent says it heard), and never "0:00" for one that has any sound — a half-second note is "0:01".
 */
export function formatClipLength(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return formatDuration(0);
  return formatDuration(Math.max(1, Math.round(seconds)));
}

/** Base name of a path, for display only. */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] || path;
}

/** The desktop the app runs on, for the few styles that differ (the font stacks in app.css). */
export function platformName(ua: string = typeof navigator === 'undefined' ? '' : navigator.userAgent): string {
  if (/Mac|iPhone|iPad/.test(ua)) return 'mac';
  if (/Windows/.test(ua)) return 'windows';
  if (/Linux|X11|FreeBSD|OpenBSD/.test(ua)) return 'linux';
  return 'other';
}

/**
 * `'missing'` when the shell found that the font CSS `system-ui` names is not installed on this Linux machine
 * (`window.__HERMES_HOST__`, src-tauri/src/fonts.rs): app.css and the avatar page then leave `system-ui` out.
 */
export function uiFontState(platform: string, host: unknown): 'missing' | null {
  const facts = host as { uiFontMissing?: unknown } | null | undefined;
  return platform === 'linux' && facts?.uiFontMissing === true ? 'missing' : null;
}

export function isMac(): boolean {
  return typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

/** The Alt key's label: ⌥ on macOS. */
export function altKey(): string {
  return isMac() ? '⌥' : 'Alt';
}

/** The modifier key label: ⌘ on macOS, Ctrl elsewhere. */
export function modKey(): string {
  return isMac() ? '⌘' : 'Ctrl';
}
