import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

// Every distinct (family, size, weight) the page uses costs WebKitGTK a fontconfig lookup the first time it is drawn
// (with this scale the launch's font work fell from ~30 to ~19 ms: bench/README.md). Sizes and weights stay on one
// scale, in whole pixels, so the launch resolves as few fonts as it can and the type stays consistent. Relative sizes (em) are the markdown's own scale and are not listed here.
const SIZES_PX = new Set([11, 12, 13, 14, 15, 16, 17, 18, 22]);
const WEIGHTS = new Set([400, 500, 600, 700]);

function sources(dir: string, out: string[] = []): string[] {
  for (const f of readdirSync(dir)) {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(svelte|css)$/.test(f) && !p.includes('/test/')) out.push(p);
  }
  return out;
}

describe('type scale', () => {
  const files = sources(join(__dirname, '..'));

  it('finds the stylesheets it checks', () => {
    expect(files.some((f) => f.endsWith('app.css'))).toBe(true);
    expect(files.filter((f) => f.endsWith('.svelte')).length).toBeGreaterThan(20);
  });

  it('uses only the scale’s pixel sizes and weights', () => {
    const off: string[] = [];
    for (const f of files) {
      const css = readFileSync(f, 'utf8');
      for (const m of css.matchAll(/font-size:\s*([\d.]+)px/g)) {
        if (!SIZES_PX.has(Number(m[1]))) off.push(`${f}: font-size ${m[1]}px`);
      }
      for (const m of css.matchAll(/font-weight:\s*(\d+)/g)) {
        if (!WEIGHTS.has(Number(m[1]))) off.push(`${f}: font-weight ${m[1]}`);
      }
    }
    expect(off).toEqual([]);
  });
});
