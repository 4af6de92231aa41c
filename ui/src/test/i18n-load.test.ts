import { afterEach, describe, expect, it, vi } from 'vitest';

// A fresh copy of the module each time: test/setup.ts has loaded every catalogue into the shared one.
async function freshI18n() {
  vi.resetModules();
  return import('../lib/i18n/index.svelte');
}

describe('catalogues other than English load when chosen', () => {
  afterEach(() => {
    vi.resetModules();
    document.documentElement.lang = 'en';
  });

  it('a page starts with English alone; a language on its way leaves the page as it is, then switches it whole', async () => {
    const i18n = await freshI18n();
    expect(i18n.loadedCatalog('en')?.['common.cancel']).toBe('Cancel');
    expect(i18n.loadedCatalog('ru')).toBeUndefined();
    expect(i18n.loadedCatalog('zh')).toBeUndefined();

    i18n.setLocale('ru');
    expect(i18n.currentLocale()).toBe('en');
    expect(i18n.t('common.cancel')).toBe('Cancel');
    await vi.waitFor(() => expect(i18n.currentLocale()).toBe('ru'));
    expect(i18n.t('common.cancel')).toBe('Отмена');
    expect(document.documentElement.lang).toBe('ru');
  });

  it('loaded first (as main.ts does before the first render), a language applies at once', async () => {
    const i18n = await freshI18n();
    const zh = await i18n.loadLocale('zh');
    expect(i18n.loadedCatalog('zh')).toBe(zh);
    i18n.setLocale('zh');
    expect(i18n.currentLocale()).toBe('zh');
    expect(i18n.t('common.cancel')).toBe(zh['common.cancel']);
  });

  it('the last choice wins when an earlier one arrives later', async () => {
    const i18n = await freshI18n();
    await i18n.loadLocale('zh');
    i18n.setLocale('ru'); // still on its way
    i18n.setLocale('zh'); // at once
    expect(i18n.currentLocale()).toBe('zh');
    await i18n.loadLocale('ru');
    await new Promise((r) => setTimeout(r, 0));
    expect(i18n.currentLocale()).toBe('zh');
    expect(document.documentElement.lang).toBe('zh');
  });
});
