import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkFiles, type Finding } from '../../scripts/check-edges.js';

// `npm run lint:edges` (issue 26 item 4): the check finds every kind of reach into another package's object in
// the fixtures (test/scripts/fixtures/edges/bad-*.ts) and nothing in the clean one, with the type checker.
const DIR = 'test/scripts/fixtures/edges';
const findings = checkFiles([`${DIR}/bad-http.ts`, `${DIR}/bad-pg.ts`, `${DIR}/bad-libraries.ts`, `${DIR}/clean.ts`]);
const of = (file: string) => findings.filter((f) => f.file === `${DIR}/${file}`).map((f) => `${f.rule} ${f.name}`).sort();

describe('lint:edges', () => {
  it('finds replaced response methods and Node\'s private socket field', () => {
    expect(of('bad-http.ts')).toEqual(['method-replaced end', 'method-replaced write', 'private-field _httpMessage']);
  });

  it('finds pg-pool\'s private fields (read, indexed, destructured, through any) and replaced pool and client methods', () => {
    expect(of('bad-pg.ts')).toEqual([
      'method-replaced connect', 'method-replaced query',
      'private-field _clients', 'private-field _idle', 'private-field _pendingQueue', 'private-field _private',
    ]);
  });

  it('finds tRPC\'s router._def, zod\'s _zod.def with a property defined on it, and replaced parse/safeParse (also by Object.assign)', () => {
    expect(of('bad-libraries.ts')).toEqual([
      'foreign-define coerce', 'method-replaced parse', 'method-replaced parse', 'method-replaced safeParse', 'method-replaced safeParseAsync',
      'private-field _def', 'private-field _zod',
    ]);
  });

  it('passes our own underscore names, our own fields named like methods, and public use of libraries', () => {
    expect(of('clean.ts')).toEqual([]);
  });

  it('names the file, the line and the code of a finding', () => {
    const f = findings.find((x) => x.name === '_httpMessage')!;
    expect(f).toMatchObject({ file: `${DIR}/bad-http.ts`, rule: 'private-field', why: 'declared in a type literal written to reach into an object' });
    expect(f.line).toBe(readFileSync(`${DIR}/bad-http.ts`, 'utf8').split('\n').findIndex((l) => l.includes('._httpMessage')) + 1);
    expect(f.text).toContain('._httpMessage');
  });
});
