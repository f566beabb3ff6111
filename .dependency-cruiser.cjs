/**
 * The import rules of the layering (README "Layout", issue 15). `npm run lint:deps` checks them on src/ and
 * CI runs it; scripts/folder-cycles.ts adds the check dependency-cruiser has no rule for: no cycle between
 * folders (a resource, an engine, the platform, the domain).
 *
 *   domain     pure rules: nothing of the service, no framework
 *   platform   infrastructure: the domain only
 *   engines    shared modules (access, participant list, ledger, ...): domain, platform, other engines
 *   resources  one folder each: domain, platform, engines, its own folder
 *   the rest   composition (router.ts, jobs.ts, entities.ts, app.ts, main.ts, cli/, demo/)
 *
 * One exception: a resource's entity.ts (the persistence model, which imports only the domain) may be
 * imported by engines and other resources.
 */
const ENTITY = '^src/resources/[^/]+/entity\\.ts$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'No import cycle between files.', from: { path: '^src/' }, to: { circular: true } },
    {
      name: 'domain-is-pure', severity: 'error',
      comment: 'src/domain holds pure rules: no other part of the service, no HTTP, tRPC, ORM or database client.',
      from: { path: '^src/domain/' },
      to: { path: ['^src/(?!domain/)', '^node_modules/(express|@trpc|trpc-to-openapi|@mikro-orm|kysely|pg|pg-boss|ioredis|nodemailer|pino|prom-client|zod)/'] },
    },
    {
      name: 'platform-knows-no-resource', severity: 'error',
      comment: 'The platform serves every resource and imports none (nor engines, nor the composition).',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: ['^src/platform/', '^src/domain/'] },
    },
    {
      name: 'engines-know-no-resource', severity: 'error',
      comment: 'Engines are shared by resources; they reach no resource (entities excepted).',
      from: { path: '^src/engines/' },
      to: { path: '^src/', pathNot: ['^src/engines/', '^src/platform/', '^src/domain/', ENTITY] },
    },
    {
      name: 'engine-through-its-entry', severity: 'error',
      comment: 'From outside an engine, only its index.ts is imported (its one entry).',
      from: { path: '^src/', pathNot: '^src/engines/([^/]+)/' },
      to: { path: '^src/engines/[^/]+/', pathNot: '^src/engines/[^/]+/index\\.ts$' },
    },
    {
      name: 'engine-to-engine-through-entry', severity: 'error',
      comment: 'An engine reaches another engine through its index.ts.',
      from: { path: '^src/engines/([^/]+)/' },
      to: { path: '^src/engines/', pathNot: ['^src/engines/$1/', '^src/engines/[^/]+/index\\.ts$'] },
    },
    {
      name: 'entities-are-leaves', severity: 'error',
      comment: 'An entity (the persistence model others may import) imports nothing of the service but the domain.',
      from: { path: ENTITY },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'resources-meet-in-engines', severity: 'error',
      comment: 'A resource imports no other resource; what several share lives in src/engines (entities excepted).',
      from: { path: '^src/resources/([^/]+)/' },
      to: { path: '^src/', pathNot: ['^src/resources/$1/', '^src/engines/', '^src/platform/', '^src/domain/', ENTITY] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
