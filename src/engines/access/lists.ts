import { expandOccurrences } from '../../domain/recurrence.js';
import { listAccessDetail, organiserListAccess } from '../../domain/participant-list-access.js';
import type { ServiceContext } from '../../platform/context.js';
import { qualified, sql, type Executor } from '../../platform/db/sql.js';
import { forbidden, notFound } from '../../platform/http/problem.js';
import { editionListsReleasedSql } from '../edition-phases/index.js';

// Who may read and change which participant list (spec 4.3 "Access rules", "Update", "Transition",
// "Transfer"; D2 settings). The rules themselves are in src/domain/participant-list-access.ts.

export type Viewer = { kind: 'admin' } | { kind: 'organiser'; organiserIds: string[] };

export function viewerOf(ctx: ServiceContext): Viewer {
  const actor = ctx.actor;
  if (actor && actor.role === 'organiser') return { kind: 'organiser', organiserIds: actor.organiserIds };
  return { kind: 'admin' };
}

export type OfferInfo = {
  uuid: string;
  editionUuid: string | null;
  published: boolean;
  hosts: string[];
  listsReleased: boolean;
  /** End of the offer's last occurrence (ms), null without dates. */
  endMs: number | null;
};

type InfoRow = {
  uuid: string; editionUuid: string | null; published: boolean; hosts: string[]; listsReleased: boolean | null;
  dates: { begin: number; end: number; recurrence: string | null }[]; horizon: number | null;
};

const ONE_YEAR_MS = 366 * 86_400_000;

/** What the access rules need to know about one offer; null when no offer has the id. */
export async function loadOfferInfo(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<OfferInfo | null> {
  const t = (name: string) => qualified(ctx.tenant.schema, name);
  const res = await sql<InfoRow>`
    select o.uuid, o.edition_uuid as "editionUuid", 'published' = any(o.places) as published,
      coalesce((select json_agg(h.organiser_uuid) from ${t('offer_hosts')} h where h.offer_uuid = o.uuid), '[]'::json) as hosts,
      case when e.uuid is null then false else ${editionListsReleasedSql(ctx.tenant.schema, 'e')} end as "listsReleased",
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence))
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json) as dates,
      (select extract(epoch from max(gt.end_at)) * 1000 from ${t('edition_tasks')} gt where gt.edition_uuid = o.edition_uuid)::float8 as horizon
    from ${t('offers')} o
    left join ${t('editions')} e on e.uuid = o.edition_uuid
    where o.uuid = ${offerUuid}::uuid`.execute(db);
  const r = res.rows[0];
  if (!r) return null;
  let endMs: number | null = null;
  for (const d of r.dates) {
    // D10: an RRULE without COUNT or UNTIL runs to the end of the edition's last task, or one year.
    const horizon = new Date(r.horizon ?? d.begin + ONE_YEAR_MS);
    const occurrences = expandOccurrences({ begin: new Date(d.begin), end: new Date(d.end), recurrence: d.recurrence, horizon });
    for (const o of occurrences) endMs = Math.max(endMs ?? -Infinity, o.end.getTime());
  }
  return { uuid: r.uuid, editionUuid: r.editionUuid, published: r.published, hosts: r.hosts, listsReleased: !!r.listsReleased, endMs };
}

export const offerNotFound = (uuid: string) => notFound(`No offer with the identifier ${uuid} exists, or you may not see it.`);

/** Whether the caller sees the offer at all (the offers resource's rule: organisers see published and own offers). */
export function offerVisible(viewer: Viewer, info: OfferInfo): boolean {
  if (viewer.kind === 'admin') return true;
  return info.published || ownOffer(viewer, info);
}

export function ownOffer(viewer: Viewer, info: OfferInfo): boolean {
  return viewer.kind === 'organiser' && info.hosts.some((h) => viewer.organiserIds.includes(h));
}

/**
 * Spec 4.3: the caller may read the offer's participant list. Unknown (or, for an organiser, invisible) offer:
 * 404; an offer without an edition: 403 for everyone; organisers: own offer, released lists, within the
 * retention period, else 403.
 */
export async function assertListReadable(
  ctx: ServiceContext, db: Executor, offerUuid: string, missing: () => Error = () => offerNotFound(offerUuid),
): Promise<OfferInfo> {
  const viewer = viewerOf(ctx);
  const info = await loadOfferInfo(ctx, db, offerUuid);
  if (!info || !offerVisible(viewer, info)) throw missing();
  if (!info.editionUuid) throw forbidden(`The offer ${offerUuid} belongs to no edition; it has no participant list.`);
  if (viewer.kind === 'organiser') {
    const access = organiserListAccess({
      ownOffer: ownOffer(viewer, info),
      listsReleased: info.listsReleased,
      offerEnd: info.endMs === null ? null : new Date(info.endMs),
      retentionWeeks: ctx.tenant.settings.retentionWeeks,
      now: new Date(),
    });
    if (access !== 'ok') throw forbidden(listAccessDetail(access));
  }
  return info;
}

/** Organisers change lists (PATCH, transitions) only where the installation lets them (D2), on lists they can read. */
export async function assertListEditable(ctx: ServiceContext, db: Executor, offerUuid: string, missing?: () => Error): Promise<void> {
  await assertListReadable(ctx, db, offerUuid, missing);
  if (viewerOf(ctx).kind === 'organiser' && !ctx.tenant.settings.organisersEditParticipantLists) {
    throw forbidden('This installation does not let organisers edit their participant lists.');
  }
}

/** Spec 4.3 "Transfer" rule 5: organisers only with organisersTransferParticipants and a list they can see. */
export async function assertMayTransfer(ctx: ServiceContext, db: Executor, offerUuid: string, missing?: () => Error): Promise<void> {
  await assertListReadable(ctx, db, offerUuid, missing);
  if (viewerOf(ctx).kind === 'organiser' && !ctx.tenant.settings.organisersTransferParticipants) {
    throw forbidden('This installation does not let organisers transfer participants.');
  }
}
