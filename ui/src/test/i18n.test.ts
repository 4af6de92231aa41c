import { describe, expect, it } from 'vitest';
import en from '../lib/i18n/en';
import ru from '../lib/i18n/ru';
import zh from '../lib/i18n/zh';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const catalogs = { en, ru, zh };

const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('i18n catalogs', () => {
  const en = Object.keys(catalogs.en).sort();
  for (const loc of ['zh', 'ru'] as const) {
    it(`${loc} has exactly the English keys, non-empty, with the same placeholders`, () => {
      expect(Object.keys(catalogs[loc]).sort()).toEqual(en);
      for (const k of en) {
        const v = catalogs[loc][k as keyof typeof catalogs.en];
        expect(v.trim(), `${loc}:${k}`).not.toBe('');
        expect(placeholders(v), `${loc}:${k}`).toEqual(placeholders(catalogs.en[k as keyof typeof catalogs.en]));
      }
    });
  }

  it('every key used in components exists', () => {
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(svelte|ts)$/.test(f) && !p.includes('/test/') && !p.includes('/i18n/')) files.push(p);
      }
    };
    walk(join(__dirname, '..'));
    const used = new Set<string>();
    for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(/\bt\('([\w.]+)'/g)) used.add(m[1]);
    expect(used.size).toBeGreaterThan(100);
    for (const k of used) expect(en, k).toContain(k);
  });
});
