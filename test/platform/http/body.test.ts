import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { expectProblem, useHarness } from '../../harness/harness.js';

// Issue 26: bodies are read by express.json / express.raw (body.ts) with the spec's checks around them; the
// conventions (415, 400, 413, 422, depth, NUL) are proved in conventions.test.ts, fuzz.test.ts and files.test.ts.
// Here what reading through express's parsers decides at the edges.
const { t } = useHarness();

const post = (rawBody: string | Buffer, headers: Record<string, string>) => t.request('POST', '/categories', { rawBody, headers });

describe('request bodies read by express', () => {
  it('takes JSON in UTF-8 with or without the charset, and a byte order mark before it', async () => {
    expect((await post('{"name":"Eins"}', { 'content-type': 'application/json; charset=UTF-8' })).status).toBe(201);
    expect((await post('{"name":"Zwei"}', { 'content-type': 'APPLICATION/JSON' })).status).toBe(201);
    expect((await post('\ufeff{"name":"Drei"}', { 'content-type': 'application/json' })).status).toBe(201);
  });

  it('refuses another charset and a compressed body with 415 problem+json', async () => {
    const latin = expectProblem(await post('{"name":"Vier"}', { 'content-type': 'application/json; charset=latin1' }), 415);
    expect(latin.detail).toMatch(/charset "latin1".*UTF-8/);
    const gzip = expectProblem(await post(gzipSync('{"name":"Fünf"}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 415);
    expect(gzip.detail).toMatch(/content encoding "gzip"/);
  });

  it('names the limit of a body too large, and refuses an empty body of another type', async () => {
    const p = expectProblem(await post(`{"name":"${'x'.repeat(1_100_000)}"}`, { 'content-type': 'application/json' }), 413);
    expect(p.detail).toBe('The request body is larger than 1048576 bytes.');
    expectProblem(await post('', { 'content-type': 'text/plain' }), 415);
  });
});
