import { describe, expect, it } from 'vitest';
import { useHarness, at } from '../../harness/harness.js';

// Issue 22.7, D5/D10: an alias derived from a name is made unique (-2, -3, ...) within 80 characters, also when
// the name is longer than that; only an alias the caller sent may be refused. For every resource that derives one.
const LONG = 'Sommerferien Abenteuer Wochenende mit Kanu Zelt und Lagerfeuer am See fuer Kinder ab zehn Jahren';

const { t } = useHarness();

async function created(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.post(path, body);
  expect(res.status, `${path}: ${res.text}`).toBe(201);
  const alias = at(res.body, 'alias');
  if (typeof alias !== 'string') throw new Error(`${path}: no alias in ${res.text}`);
  return alias;
}

function expectDistinctWithin80(aliases: string[]) {
  expect(new Set(aliases).size).toBe(aliases.length);
  for (const a of aliases) expect(a.length).toBeLessThanOrEqual(80);
  expect(aliases[0]).toMatch(/^sommerferien-abenteuer-wochenende/);
  expect(aliases.slice(1).map((a) => a.slice(a.lastIndexOf('-')))).toEqual(aliases.slice(1).map((_, i) => `-${i + 2}`));
}

describe('derived aliases of long names', () => {
  it.each(['categories', 'organisers', 'editions'])('%s: four records of one long name get four aliases', async (path) => {
    const aliases: string[] = [];
    for (let i = 0; i < 4; i++) aliases.push(await created(`/${path}`, { name: LONG }));
    expectDistinctWithin80(aliases);
  });

  it('offers, their copies and variants', async () => {
    const edition = (await t.post('/editions', { name: 'Sommer 2027' })).body.uuid as string;
    const aliases: string[] = [];
    for (let i = 0; i < 3; i++) aliases.push(await created('/offers', { name: LONG, edition }));
    expectDistinctWithin80(aliases);
    const first = (await t.get(`/offers?q=${encodeURIComponent('Lagerfeuer')}`)).body[0].uuid as string;
    const more = [await created(`/offers/${first}/variant`, {}), await created(`/offers/${first}/variant`, {})];
    const copies = [await created(`/offers/${first}/copy`, {}), await created(`/offers/${first}/copy`, {})];
    const all = [...aliases, ...more, ...copies];
    expect(new Set(all).size).toBe(all.length);
    for (const a of all) expect(a.length).toBeLessThanOrEqual(80);
  });
});
