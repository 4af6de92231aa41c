import en, { type Catalog } from './en';
import ru from './ru';
import zh from './zh';
import { pluralCategory } from './dates';

export type Locale = 'en' | 'zh' | 'ru';
export type MessageKey = keyof Catalog;

export const catalogs: Record<Locale, Catalog> = { en, zh, ru };
export const LOCALES: { id: Locale; name: string }[] = [
  { id: 'en', name: 'English' },
  { id: 'zh', name: '中文' },
  { id: 'ru', name: 'Русский' },
];

const state = $state<{ locale: Locale }>({ locale: 'en' });

export function setLocale(l: Locale): void {
  state.locale = l;
  if (typeof document !== 'undefined') document.documentElement.lang = l;
}

export function currentLocale(): Locale {
  return state.locale;
}

/** Translate `key`, filling `{name}` placeholders from `params`. Reactive on the locale. */
export function t(key: MessageKey, params?: Record<string, string | number>): string {
  const text = catalogs[state.locale][key] ?? en[key] ?? key;
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/** Picks a plural form key: `${base}_one` / `${base}_other` (catalog entries decide wording). */
export function tn(base: string, n: number, params?: Record<string, string | number>): string {
  const cat = pluralCategory(state.locale, n);
  const key = (`${base}_${cat}` in en ? `${base}_${cat}` : `${base}_other`) as MessageKey;
  return t(key, { n, ...params });
}
