import type { Request, Response } from 'express';
import { sql } from '../db/sql.js';
import type { Page } from './fields.js';
import { publicBaseUrl } from './public-url.js';

// Issue 24: every list answer says how many records match (`X-Total-Count`) and links its neighbouring pages
// (`Link`, RFC 8288: first, prev, next, last). The body stays the plain array of spec 4.1, so a client that pages
// until a short page keeps working. The total comes from the page's own query (`count(*) over ()`), not a second
// round trip; only a page past the end, which holds no row to carry it, asks once more for the first row.
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

/**
 * A query string longer than this gets no `Link`: it would be repeated four times in the answer's headers, and
 * clients refuse headers over 16 KiB. Real filters stay far below it (a text filter takes at most 500 characters);
 * only unknown parameters, which the service ignores (spec 1.9), grow a query that long. `X-Total-Count` is sent.
 */
const MAX_LINKED_QUERY = 2000;

export function pagingHeaders(req: Request, p: PageTotal): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(p.total) };
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  // The other parameters as the client sent them (its own encoding), `page` replaced.
  const params = (q < 0 ? '' : req.url.slice(q + 1)).split('&').filter((x) => x && !/^page(=|$)/.test(x));
  if (params.join('&').length > MAX_LINKED_QUERY) return headers;
  // The request's own address: scheme, host and port as it came in.
  const url = (page: number) => `${publicBaseUrl(req)}${path}?${[...params, `page=${page}`].join('&')}`;
  const current = Math.floor(p.offset / p.limit) + 1;
  const last = Math.max(1, Math.ceil(p.total / p.limit));
  const links: [number, string][] = [[1, 'first']];
  if (current > 1) links.push([Math.min(current - 1, last), 'prev']);
  if (current < last) links.push([current + 1, 'next']);
  links.push([last, 'last']);
  headers.Link = links.map(([n, rel]) => `<${url(n)}>; rel="${rel}"`).join(', ');
  return headers;
}

/** The API's `paging` for one request: the headers go on its answer (a problem answer drops them again). */
export function pagingFor(req: Request, res: Response): PagingReport {
  return (p) => {
    for (const [k, v] of Object.entries(pagingHeaders(req, p))) res.setHeader(k, v);
  };
}

/** Headers a list answer carries that an error answer must not. */
export const PAGING_HEADERS = ['Link', 'X-Total-Count'];
