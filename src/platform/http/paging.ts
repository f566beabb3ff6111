import { sql } from '../db/sql.js';
import type { Page } from './fields.js';

// Issue 24 (14): every list answer says how many records match (`X-Total-Count`), the "hint of more": a client
// knows more records follow while `page * itemsPerPage < X-Total-Count`. No `Link` header: spec 4.1 ("The response
// is a plain JSON array. No `Link` header is sent.") and 9.8 forbid it (docs/decisions.md "Paging headers"). The
// body stays the plain array, so a client that pages until a short page keeps working. The total comes from the
// page's own query (`count(*) over ()`), not a second round trip; only a page past the end, which holds no row to
// carry it, asks once more for the first row.
// The column is named `listTotal` (LIST_TOTAL below), never `total`, which a receipt has.

export type PageTotal = Page & { total: number };

/** How a list reports its total (ServiceContext.paging): set by the API for the request; jobs, the CLI and direct calls have none. */
export type PagingReport = (page: PageTotal) => void;

/**
 * Reports the total of a page: from its first row's `total` (`count(*) over () as "listTotal"` in the page's query), or,
 * when the page is past the end, from the first row of the same query (`recount`, asked only then).
 */
export async function reportTotal(
  ctx: { paging?: PagingReport }, page: Page, rows: readonly { listTotal: number | string }[], recount: () => Promise<readonly { listTotal: number | string }[]>,
): Promise<void> {
  if (!ctx.paging) return;
  let total = 0;
  if (rows.length > 0) total = Number(rows[0]!.listTotal);
  else if (page.offset > 0) total = Number((await recount())[0]?.listTotal ?? 0);
  ctx.paging({ ...page, total });
}

/** A list that matched nothing before its query ran (a reference filter naming nothing, spec 1.9): `[]`, total 0. */
export function emptyPage<T>(ctx: { paging?: PagingReport }, page: Page): T[] {
  ctx.paging?.({ ...page, total: 0 });
  return [];
}

/** The select-list entry that gives every row of a page the list's total (a window over the filtered rows). */
export const LIST_TOTAL = sql`count(*) over ()::int as "listTotal"`;

/** The same for a typed (kysely) query: `.select([..., listTotal])`. */
export const listTotal = sql<number>`count(*) over ()::int`.as('listTotal');

/** The headers of a list answer: the total only (spec 4.1, 9.8: no `Link`). */
export function pagingHeaders(p: PageTotal): Record<string, string> {
  return { 'X-Total-Count': String(p.total) };
}
