import en, { type Catalog } from './en';
import { pluralCategory } from './dates';

export type Locale = 'en' | 'zh' | 'ru';
export type MessageKey = keyof Catalog;

export const LOCALES: { id: Locale; name: string }[] = [
  { id: 'en', name: 'English' },
  { id: 'zh', name: '中文' },
  { id: 'ru', name: 'Русский' },
];

// English is built in (the fallback for every key); the other catalogues are chunks of their own, loaded when chosen:
// each is a third of the page's script (escaped to ASCII, a Cyrillic letter is six bytes), parsed at every window's
// start by people who never read it. main.ts loads the chosen one before the first render.
const LOADERS: Record<Exclude<Locale, 'en'>, () => Promise<{ default: Catalog }>> = {
  zh: () => import('./zh'),
  ru: () => import('./ru'),
};
const loaded: Partial<Record<Locale, Catalog>> = { en };

const state = $state<{ locale: Locale }>({ locale: 'en' });
/** The locale last asked for (its catalogue may still be on its way). */
let wanted: Locale = 'en';

/** The catalogue of `l`, loading it if it is not yet (English never waits). */
export async function loadLocale(l: Locale): Promise<Catalog> {
  const have = loaded[l];
  if (have) return have;
  if (l === 'en') return en;
  const cat = (await LOADERS[l]()).default;
  loaded[l] = cat;
  return cat;
}

/** A catalogue already loaded, or `undefined`. */
export function loadedCatalog(l: Locale): Catalog | undefined {
  return loaded[l];
}

function apply(l: Locale): void {
  state.locale = l;
  if (typeof document !== 'undefined') document.documentElement.lang = l;
}

/** Switches the UI's language: at once when its catalogue is loaded (main.ts loads the saved one before the first
 *  render), else once it is — the page keeps its current language until then, never a mix. */
export function setLocale(l: Locale): void {
  wanted = l;
  if (loaded[l]) return apply(l);
  loadLocale(l).then(
    () => wanted === l && apply(l),
    () => {
      /* a chunk that cannot load (never for the bundled files): the language stays as it is */
    },
  );
}

/** The language the UI shows. */
export function currentLocale(): Locale {
  return state.locale;
}

/** Translate `key`, filling `{name}` placeholders from `params`. Reactive on the locale. */
export function t(key: MessageKey, params?: Record<string, string | number>): string {
  const text = (loaded[state.locale] ?? en)[key] ?? en[key] ?? key;
  if (!params) return text;
  return text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/** Picks a plural form key: `${base}_one` / `${base}_other` (catalog entries decide wording). */
export function tn(base: string, n: number, params?: Record<string, string | number>): string {
  const cat = pluralCategory(state.locale, n);
  const key = (`${base}_${cat}` in en ? `${base}_${cat}` : `${base}_other`) as MessageKey;
  return t(key, { n, ...params });
}
