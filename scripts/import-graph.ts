import { cruise, type IModule } from 'dependency-cruiser';

// `npm run lint:deps`: the import rules (.dependency-cruiser.cjs) and one check dependency-cruiser has no rule
// for: no cycle between folders (each resource, each engine, the platform, the domain). With `--sizes` it also
// prints the source files over the limit of 350 lines (generated files aside). Exit 1 on any violation.

const MAX_LINES = 350;

/** The folder a file belongs to for the folder-cycle check. */
export function folderOf(path: string): string {
  // Entities are leaves (the rule entities-are-leaves: they import only the domain), shared by rule: one node.
  if (/^src\/resources\/[^/]+\/entity\.ts$/.test(path)) return 'entities';
  const m = /^src\/(resources|engines)\/([^/]+)\//.exec(path);
  if (m) return `${m[1]}/${m[2]}`;
  const top = /^src\/(domain|platform|cli|demo)\//.exec(path);
  return top ? top[1]! : path.replace(/^src\//, '');
}

/** Strongly connected components with more than one member (Tarjan). */
export function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), stack: string[] = [], onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); c.push(w); } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

async function main() {
  const { default: config } = await import('../.dependency-cruiser.cjs' as string) as { default: Record<string, unknown> & { options: object } };
  const result = await cruise(['src'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } } as never);
  const output = result.output as { modules: IModule[]; summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
  let failed = false;
  for (const v of output.summary.violations) {
    failed = true;
    console.error(`${v.rule.name}: ${v.from} -> ${v.to}`);
  }
  const folders = new Map<string, Set<string>>();
  for (const m of output.modules) {
    if (!m.source.startsWith('src/')) continue;
    const from = folderOf(m.source);
    if (!folders.has(from)) folders.set(from, new Set());
    for (const d of m.dependencies) {
      if (!d.resolved.startsWith('src/')) continue;
      const to = folderOf(d.resolved);
      if (to !== from) folders.get(from)!.add(to);
    }
  }
  for (const c of cycles(folders)) {
    failed = true;
    console.error(`folder cycle: ${c.join(' <-> ')}`);
  }
  if (process.argv.includes('--sizes')) {
    const { readFileSync } = await import('node:fs');
    for (const m of output.modules) {
      // Generated files (npm run db:types) are read by the compiler, not by people.
      if (!m.source.startsWith('src/') || m.source.endsWith('.generated.ts')) continue;
      const lines = readFileSync(m.source, 'utf8').split('\n').length - 1;
      if (lines > MAX_LINES) { failed = true; console.error(`over ${MAX_LINES} lines: ${m.source} (${lines})`); }
    }
  }
  const files = output.modules.filter((m) => m.source.startsWith('src/')).length;
  console.log(`${files} source files, ${folders.size} folders: ${failed ? 'violations above' : 'no violation, no cycle'}`);
  process.exitCode = failed ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
