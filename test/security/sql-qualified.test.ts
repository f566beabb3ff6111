import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// D1: one database, one schema per tenant, pooled connections. Raw SQL (kysely `sql` templates) is not
// schema-aware, so a table named bare would be looked up on the connection's search_path: another
// tenant's table, or none. Every table in raw SQL under src/ is therefore named through an interpolation
// (`${qualified(schema, 'table')}`) or a fixed schema (`control.`, `information_schema.`, `pg_catalog.`),
// and search_path is only ever set with SET LOCAL (inside one transaction). Migrations are exempt: they run
// with search_path set to the schema they migrate.

const ROOT = path.resolve(import.meta.dirname, '../../src');
const FIXED_SCHEMAS = new Set(['control', 'information_schema', 'pg_catalog', 'pgboss']);
/** Words that may follow a table keyword without being a table (`for update skip locked`, `do update set`). */
const NOT_TABLES = new Set(['set', 'skip', 'nowait', 'of', 'lateral', 'only', 'select', 'values', 'default']);
const PLACEHOLDER = '\u0001';

type Offender = { file: string; line: number; sql: string; reason: string };

/** The `sql` tagged templates of a source text, interpolations replaced by a placeholder. */
function sqlTemplates(source: string): { start: number; text: string }[] {
  const out: { start: number; text: string }[] = [];
  const tag = /\bsql\s*(?=[<`])/g;
  for (let m = tag.exec(source); m; m = tag.exec(source)) {
    let i = m.index + m[0].length;
    if (source[i] === '<') {
      // sql<{ a: string[] }>`…`: skip the type arguments.
      let depth = 0;
      for (; i < source.length; i++) {
        if (source[i] === '<') depth++;
        else if (source[i] === '>' && source[i - 1] !== '=') depth--;
        if (depth === 0) break;
      }
      i++;
      while (/\s/.test(source[i] ?? '')) i++;
    }
    if (source[i] !== '`') continue;
    const { text } = readTemplate(source, i + 1);
    out.push({ start: m.index, text });
  }
  return out;
}

/** Reads a template literal body from `i` (after the backtick); `${…}` becomes the placeholder. */
function readTemplate(source: string, i: number): { text: string; end: number } {
  let text = '';
  while (i < source.length) {
    const c = source[i];
    if (c === '\\') { text += source.slice(i, i + 2); i += 2; continue; }
    if (c === '`') return { text, end: i + 1 };
    if (c === '$' && source[i + 1] === '{') { i = skipExpression(source, i + 2); text += ` ${PLACEHOLDER} `; continue; }
    text += c;
    i++;
  }
  return { text, end: i };
}

/** Skips a `${…}` expression (nested braces, strings and templates) and returns the index after its `}`. */
function skipExpression(source: string, i: number): number {
  let depth = 1;
  while (i < source.length && depth > 0) {
    const c = source[i];
    if (c === '`') { i = readTemplate(source, i + 1).end; continue; }
    if (c === "'" || c === '"') {
      i++;
      while (i < source.length && source[i] !== c) i += source[i] === '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') depth--;
    i++;
  }
  return i;
}

/** Problems of one template: bare table names after from/join/into/update/table/using/truncate. */
function checkTemplate(text: string): string[] {
  // Comments and string literals name no tables.
  const clean = text.replace(/--[^\n]*/g, ' ').replace(/'(?:[^']|'')*'/g, "''");
  const ctes = new Set([...clean.matchAll(/\b([a-z_][a-z0-9_]*)\s*(?:\([^)]*\))?\s+as\s+(?:not\s+)?(?:materialized\s+)?\(/gi)].map((m) => m[1].toLowerCase()));
  const problems: string[] = [];
  if (/\bset\s+(?!local\b)(?:session\s+)?search_path\b/i.test(clean)) problems.push('search_path set without LOCAL');
  const keyword = /\b(from|join|into|update|table|using|truncate)\s+([^\s(),;]+)(\()?/gi;
  for (let m = keyword.exec(clean); m; m = keyword.exec(clean)) {
    const [, word, name, call] = m;
    const before = clean.slice(0, m.index);
    // An interpolated name, or a set-returning function after from/join/using (unnest(…)).
    if (name.startsWith(PLACEHOLDER) || (call && /^(from|join|using)$/i.test(word))) continue;
    const lower = name.toLowerCase().replace(/"/g, '');
    if (NOT_TABLES.has(lower) || ctes.has(lower)) continue;
    if (word.toLowerCase() === 'from' && /\bdistinct\s*$/i.test(before)) continue; // is [not] distinct from
    if (word.toLowerCase() === 'from' && /\b(extract|substring|trim|overlay|position)\s*\([^()]*$/i.test(before)) continue;
    if (word.toLowerCase() === 'update' && /\bfor\s+(no\s+key\s+)?$/i.test(before)) continue;
    const dot = lower.indexOf('.');
    if (dot > 0 && FIXED_SCHEMAS.has(lower.slice(0, dot))) continue;
    problems.push(`${word} ${name}`);
  }
  return problems;
}

/** Other ways to name a table in raw SQL: sql.table('bare'), sql.raw('… from bare'). */
function checkHelpers(source: string): { index: number; reason: string }[] {
  const out: { index: number; reason: string }[] = [];
  for (const m of source.matchAll(/\bsql\.table\(\s*(['"])([^'"]*)\1/g)) {
    if (!m[2].includes('.')) out.push({ index: m.index!, reason: `sql.table('${m[2]}') without a schema` });
  }
  for (const m of source.matchAll(/\bsql\.raw\(\s*(['"`])([^'"`]*)\1/g)) {
    const problems = checkTemplate(m[2]);
    if (problems.length) out.push({ index: m.index!, reason: `sql.raw: ${problems.join(', ')}` });
  }
  return out;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'migrations' ? [] : sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

function scan(): { offenders: Offender[]; templates: number; files: number } {
  const offenders: Offender[] = [];
  let templates = 0;
  const files = sourceFiles(ROOT);
  for (const file of files) {
    const source = readFileSync(file, 'utf8');
    const lineOf = (index: number) => source.slice(0, index).split('\n').length;
    const rel = path.relative(path.resolve(ROOT, '..'), file);
    for (const t of sqlTemplates(source)) {
      templates++;
      for (const reason of checkTemplate(t.text)) {
        offenders.push({ file: rel, line: lineOf(t.start), sql: t.text.replace(/\s+/g, ' ').trim().slice(0, 120), reason });
      }
    }
    for (const o of checkHelpers(source)) offenders.push({ file: rel, line: lineOf(o.index), sql: '', reason: o.reason });
  }
  return { offenders, templates, files: files.length };
}

describe('raw SQL names its tables with a schema', () => {
  it('the checker tells qualified from bare table names', () => {
    const bad = [
      'select * from participants where uuid = $1',
      'select 1 from x join accounts a on true',
      'insert into outbox (uuid) values (1)',
      'update offers set name = 1',
      'delete from t_demo.offers',
      'set search_path to t_demo',
      'select 1 from "participants"',
    ];
    const good = [
      `select * from ${PLACEHOLDER} p join ${PLACEHOLDER} a on a.uuid = p.account_uuid`,
      'select 1 from control.tenants t',
      'select column_name from information_schema.columns',
      `select uuid from ${PLACEHOLDER} where x is distinct from ${PLACEHOLDER} for update skip locked`,
      `insert into ${PLACEHOLDER} (a) values (1) on conflict (a) do update set a = excluded.a`,
      `select extract(year from p.date_of_birth), x from unnest(${PLACEHOLDER}::uuid[]) as x`,
      `with moved as (select 1 from ${PLACEHOLDER}) select * from moved`,
      "select 'from nowhere' -- join comments\n from control.tenants",
      'set local search_path to t_demo',
      `select 1 from (select 2) s left join lateral (select 3) l on true`,
    ];
    for (const s of bad) expect(checkTemplate(s), s).not.toEqual([]);
    for (const s of good) expect(checkTemplate(s), s).toEqual([]);
    const templates = sqlTemplates('const r = sql<{ a: string[] }>`select ${sql`x from ${t}`} from ${q(`y`)} p`; sql`from bare`;');
    expect(templates.map((t) => checkTemplate(t.text))).toEqual([[], [], ['from bare']]);
  });

  it('in every sql template under src/ (migrations exempt)', () => {
    const { offenders, templates, files } = scan();
    expect(templates).toBeGreaterThan(50);
    const report = offenders.map((o) => `${o.file}:${o.line}: ${o.reason}${o.sql ? `  [${o.sql}]` : ''}`).join('\n');
    expect(offenders, `raw SQL with a bare table name (use \${qualified(schema, 'table')} or SET LOCAL search_path):\n${report}`).toEqual([]);
    console.log(`[sql-qualified] ${templates} sql templates in ${files} files checked, 0 bare table names`);
  });
});
