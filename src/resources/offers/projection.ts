import { offerTransitionsFor, type OfferPlace } from '../../domain/offer-workflow.js';
import type { ServiceContext, Viewer } from '../../platform/context.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { offerReaderRole, ownsOffer } from '../../engines/access/index.js';
import { countsSql, pageSql, publicFieldsSql, teamFieldsSql, teamTailSql, websiteFieldsSql } from './offer-json.js';

// The offer as the API writes it (spec 2.3, 4.2; D5, D10): one SQL projection per page that writes each offer's
// JSON text (offer-json.ts: every reference, count and rule PostgreSQL can apply, timestamps formatted), and
// `offerJson` adds what the domain decides in Node (the team's transitions; issue 25: no parse of the row into
// objects and JSON.stringify back). What the viewer sees is src/engines/access/'s.
// It stays a raw SQL template: a json projection with correlated subqueries, sent as one named statement
// (platform/db/prepared.ts) whose text must not change from page to page; its tables come from `tablesOf`.

/** What the page's statement gives per offer: the answer's JSON text around `transitions`, and what they need. */
export type Row = {
  /** The fields up to `transitions` (all of them for a viewer without a role), nulls omitted: a JSON object. */
  head: string;
  /** The team's fields after `transitions` (variantBase, variants): a JSON object; null for other viewers. */
  tail: string | null;
  places: OfferPlace[];
  hostIds: string[];
  firstBegin: string | null;
};

/** One page of offers as `viewer` reads them, among the rows `where` lets through (access: offerVisibleSql). */
export function projection(ctx: ServiceContext, viewer: Viewer, where: RawBuilder<unknown>, orderBy: RawBuilder<unknown>, limit: number, offset: number, everyOffer = false) {
  const t = tablesOf(ctx.tenant.schema);
  // Anonymous callers see neither variants nor counts by state nor the internal fields; a website token (D11) sees
  // the public offers with their application questions: it builds the families' form.
  const team = offerReaderRole(viewer) !== null;
  const more = team ? sql`, ${teamFieldsSql}` : viewer.kind === 'website' ? sql`, ${websiteFieldsSql}` : sql``;
  // Only an organiser's transitions depend on whether they host the offer (ownsOffer).
  const hostIds = viewer.kind === 'organiser' ? sql`array(select h.organiser_uuid from ${t('offer_hosts')} h where h.offer_uuid = o.uuid)` : sql`'{}'::uuid[]`;
  const tail = team ? sql`json_strip_nulls(json_build_object(${teamTailSql(ctx)}))::text` : sql`null::text`;
  // `listTotal`: how many offers the conditions match, for the paging headers (issue 24); the page first (pageSql).
  return sql<Row & { listTotal: number }>`
    select p.total as "listTotal", o.places, p.first_begin::text as "firstBegin",
      ${hostIds} as "hostIds",
      json_strip_nulls(json_build_object(${publicFieldsSql(ctx)}${more}))::text as head, ${tail} as tail
    from ${pageSql(ctx, where, orderBy, limit, offset, everyOffer)} p
    join ${t('offers')} o on o.uuid = p.id
    join ${t('editions')} e on e.uuid = o.edition_uuid
    left join lateral ${countsSql(ctx, team)} c on true
    order by p.n`;
}

/**
 * The offer's answer as JSON text (spec 2.3, 4.2): PostgreSQL's fields, and for the team the transitions this
 * viewer may take now (D5, domain/offer-workflow.ts) between them.
 */
export function offerJson(viewer: Viewer, r: Row, now: Date): string {
  const role = offerReaderRole(viewer);
  if (role === null) return r.head;
  const transitions = offerTransitionsFor({
    role, ownOffer: ownsOffer(viewer, r.hostIds), places: r.places, now, firstDateBegin: r.firstBegin ? new Date(r.firstBegin) : null,
  });
  const tail = r.tail && r.tail !== '{}' ? `,${r.tail.slice(1)}` : '}';
  return `${r.head.slice(0, -1)},"transitions":${JSON.stringify(transitions)}${tail}`;
}
