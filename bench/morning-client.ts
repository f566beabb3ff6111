import http from 'node:http';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { lanes } from './load.js';

// The load generator of bench/morning.ts, in a process of its own (so that its work is neither the service's
// nor the bench's): `tsx bench/morning-client.ts <plan.json>`. It warms up (each municipality's public page read
// once and checked; then a short morning on other offers: the warm-up children's applications to each
// municipality's warm-up offer, interleaved, `inFlight` in flight, the visitors reading meanwhile, none of it
// measured), prints `{"phase":"ready"}`, waits for `go` on
// stdin, then sends every application (POST /attendances with the municipality's token, notify) with
// `inFlight` in flight, interleaved across the municipalities, while `visitors` visitors read the public offer
// pages (GET /offers, anonymous) one after another until the last application is answered; it prints the
// figures as one JSON line (`{"phase":"done",…}`) and exits.
//
// The visitors: the service runs with TRUST_PROXY=1 (D12, one proxy in front), this process being that proxy:
// each visitor's request carries its own client address in X-Forwarded-For, a new one every 4 reads, as
// visitors from many homes arrive. The anonymous limit (5 an hour per address and municipality) then never
// refuses them, and the Redis limiter counts every read as deployed.

export type MorningPlan = {
  port: number;
  inFlight: number;
  visitors: number;
  municipalities: { host: string; token: string; offers: string[]; children: string[]; warmOffer: string; warmChildren: string[] }[];
};

export type ClientFigures = {
  phase: 'done';
  /** Date.now() when the first application was sent and when the last was answered. */
  startedAt: number;
  lastAnswerAt: number;
  /** Wall time from the first application sent to the last answered. */
  seconds: number;
  /** This process's CPU seconds over that time. */
  cpuSeconds: number;
  latencies: number[];
  /** Per application: [ms from the first application sent until it was sent, its latency in ms]. */
  timeline: [number, number][];
  statuses: Record<string, number>;
  failures: string[];
  page: { latencies: number[]; statuses: Record<string, number>; failures: string[] };
};

type Answer = { status: number; text: string };

function send(port: number, agent: http.Agent, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const all: Record<string, string | number> = { ...headers };
  if (payload !== undefined) Object.assign(all, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers: all, timeout: 120_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    // A refused or reset connection is an answer too (0), counted as not 201.
    req.on('error', (err) => resolve({ status: 0, text: err.message }));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end(payload);
  });
}

const count = (into: Record<string, number>, status: number) => (into[status] = (into[status] ?? 0) + 1);

/**
 * Every municipality's children in turns: the k-th item is municipality k mod M's child k div M (as many per
 * municipality as the one with the fewest has), so every municipality's applications arrive at the same pace.
 */
function interleaved<T>(children: string[][], item: (m: number, c: number, child: string) => T): T[] {
  const per = Math.min(...children.map((x) => x.length));
  return Array.from({ length: per * children.length }, (_, k) => {
    const m = k % children.length;
    const c = Math.floor(k / children.length);
    return item(m, c, children[m]![c]!);
  });
}

async function main() {
  const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as MorningPlan;
  const M = plan.municipalities;
  const apps = new http.Agent({ keepAlive: true, maxSockets: plan.inFlight });
  const pages = new http.Agent({ keepAlive: true, maxSockets: plan.visitors });
  let reads = 0;
  // 10.0.0.0/8, a new address every 4 reads (the anonymous allowance is 5 per address and municipality).
  const address = () => {
    const n = Math.floor(reads++ / 4) + 1;
    return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  };
  const readPage = (m: number) => send(plan.port, pages, 'GET', '/api/offers', { host: M[m]!.host, 'x-forwarded-for': address() });
  const apply = (m: number, offer: string, participant: string) =>
    send(plan.port, apps, 'POST', '/api/attendances', { host: M[m]!.host, authorization: `Bearer ${M[m]!.token}` }, { offer, participant, notify: true });

  // Warm-up: every municipality's page (it must list its offers) and two applications each.
  for (const [m, municipality] of M.entries()) {
    const page = await readPage(m);
    const listed = page.status === 200 ? (JSON.parse(page.text) as unknown[]).length : -1;
    if (listed !== municipality.offers.length) throw new Error(`GET /offers of ${municipality.host}: ${page.status}, ${listed} offers listed, not ${municipality.offers.length}: ${page.text.slice(0, 300)}`);
  }
  // The visitors: each reads the municipalities' pages in turn until `reading()` turns false; `page` (the
  // measured run's) records what they saw.
  const visit = (reading: () => boolean, page?: ClientFigures['page']) => Promise.all(Array.from({ length: plan.visitors }, async (_, v) => {
    for (let n = 0; reading(); n++) {
      const started = performance.now();
      const r = await readPage((v + n * plan.visitors) % M.length);
      if (!page) continue;
      if (!reading()) break; // answered after the last application: outside the measured window
      page.latencies.push(performance.now() - started);
      count(page.statuses, r.status);
      if (r.status !== 200 && page.failures.length < 5) page.failures.push(`${r.status} ${r.text.slice(0, 300)}`);
    }
  }));
  // The warm-up morning, shaped like the measured one: V8 compiles the service's hot code within its first few
  // hundred requests (measured: the API process spent 2.8 ms of CPU per application in the first second after a
  // warm-up of 40 applications, 1.2 ms from the second second on), as a service that has answered requests
  // before the opening has.
  const warm = interleaved(M.map((x) => x.warmChildren), (m, c, child) => ({ m, child }));
  let warming = true;
  const warmVisitors = visit(() => warming);
  await lanes(warm, plan.inFlight, async ({ m, child }) => {
    const r = await apply(m, M[m]!.warmOffer, child);
    if (r.status !== 201) throw new Error(`warm-up POST /attendances: ${r.status} ${r.text.slice(0, 300)}`);
  });
  warming = false;
  await warmVisitors;
  console.log(JSON.stringify({ phase: 'ready' }));
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (l) => l.trim() === 'go' && resolve());
    // The bench ended without saying go.
    lines.on('close', () => reject(new Error('stdin closed before "go"')));
  });
  lines.close();

  // The applications, interleaved: the k-th goes to municipality k mod M, its child k div M, the child's offer
  // (child mod offers): every municipality's offers fill at the same pace.
  const items = interleaved(M.map((x) => x.children), (m, c, child) => ({ m, child, offer: M[m]!.offers[c % M[m]!.offers.length]! }));
  const statuses: Record<string, number> = {};
  const failures: string[] = [];
  const page = { latencies: [] as number[], statuses: {} as Record<string, number>, failures: [] as string[] };
  let running = true;
  const visitors = visit(() => running, page);
  const startedAt = Date.now();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const timeline: [number, number][] = [];
  const latencies = await lanes(items, plan.inFlight, async ({ m, child, offer }) => {
    const sent = performance.now();
    const r = await apply(m, offer, child);
    timeline.push([sent - t0, performance.now() - sent]);
    count(statuses, r.status);
    if (r.status !== 201 && failures.length < 5) failures.push(`${r.status} ${r.text.slice(0, 300)}`);
  });
  const lastAnswerAt = Date.now();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  running = false;
  await visitors;
  apps.destroy();
  pages.destroy();
  const figures: ClientFigures = { phase: 'done', startedAt, lastAnswerAt, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, latencies, timeline, statuses, failures, page };
  process.stdout.write(`${JSON.stringify(figures)}\n`, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
