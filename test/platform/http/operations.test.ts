import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { operationsOf, templatePattern } from '../../../src/platform/http/operations.js';
import { procedure, router } from '../../../src/platform/http/trpc.js';
import { appRouter } from '../../../src/router.js';

// Issue 26: the router's procedures are read through public surfaces (the built router's own properties, each
// procedure's `meta`, trpc-to-openapi's `getInputOutputParsers`), never through tRPC's `_def`.
describe('the operations of a router', () => {
  const input = z.object({ uuid: z.string() });
  const output = z.object({ ok: z.boolean() });
  const r = router({
    things: router({
      get: procedure.meta({ access: 'public', openapi: { method: 'GET', path: '/things/{uuid}' } }).input(input).output(output).query(() => ({ ok: true })),
      make: procedure.meta({ access: 'write', successStatus: 201, openapi: { method: 'POST', path: '/things' } })
        .input(input).input(z.object({ name: z.string() })).output(output).mutation(() => ({ ok: true })),
      hidden: procedure.meta({ access: 'read' }).query(() => 1),
    }),
  });

  it('lists each procedure with a REST meta by its caller path, with its schemas', () => {
    const ops = operationsOf(r);
    expect(ops.map((o) => [o.path, o.method, o.template, o.meta.access])).toEqual([
      ['things.get', 'GET', '/things/{uuid}', 'public'],
      ['things.make', 'POST', '/things', 'write'],
    ]);
    expect(ops[0]!.input).toBe(input);
    expect(ops[0]!.inputCount).toBe(1);
    expect(ops[0]!.output).toBe(output);
    expect(ops[1]!.inputCount).toBe(2);
    expect(ops[1]!.meta.successStatus).toBe(201);
    expect(operationsOf(r)).toBe(ops);
  });

  it('finds every operation of the service', () => {
    const ops = operationsOf(appRouter);
    expect(ops.length).toBeGreaterThan(60);
    expect(ops.find((o) => o.path === 'offers.list')?.template).toBe('/offers');
    expect(new Set(ops.map((o) => `${o.method} ${o.template}`)).size).toBe(ops.length);
  });

  it('matches a template one segment per parameter', () => {
    expect(templatePattern('/things/{uuid}').test('/things/abc')).toBe(true);
    expect(templatePattern('/things/{uuid}').test('/things/abc/')).toBe(true);
    expect(templatePattern('/things/{uuid}').test('/things/a/b')).toBe(false);
    expect(templatePattern('/a/{x}/b/{y}', true).exec('/a/1/b/2')?.slice(1)).toEqual(['1', '2']);
  });
});
