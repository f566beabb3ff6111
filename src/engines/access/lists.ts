import { expandOccurrences } from '../../domain/recurrence.js';
import { listAccessDetail, organiserListAccess } from '../../domain/participant-list-access.js';
import type { ServiceContext } from '../../platform/context.js';
import { sql, tablesOf, type Executor, type TenantDB } from '../../platform/db/sql.js';
import { forbidden } from '../../domain/errors.js';
import { editionHorizonSql, editionListsReleasedSql } from '../edition-phases/index.js';
import { offerNotFound, offerVisibleSql, ownsOffer } from './offers.js';

// Who may read and change which participant list, and see which application (spec 4.3 "Access rules",
// "Update", "Transition", "Transfer", 5.5; D2 settings). The rules themselves are in
// src/domain/participant-list-access.ts; which offers a viewer sees at all is offers.ts's.

export type OfferInfo = {
  uuid: string;
  /** Whether the viewer sees the offer at all (offerVisibleSql). */
  visible: boolean;
  editionUuid: string | null;
  hosts: string[];
  listsReleased: boolean;
  /** End of the offer's last occurrence (ms), null without dates. */
  endMs: number | null;
};

type InfoRow = {
  uuid: TenantDB['offers']['uuid']; visible: boolean; editionUuid: TenantDB['offers']['edition_uuid'] | null; hosts: string[]; listsReleased: boolean | null;
  dates: { begin: number; end: number; recurrence: string | null }[]; horizon: number | null;
};


/** What the access rules need to know about one offer; null when no offer has the id. */
export async function loadOfferInfo(ctx: ServiceContext, db: Executor, offerUuid: string): Promise<OfferInfo | null> {
  // Raw SQL: json aggregates and the access conditions (offerVisibleSql, editionListsReleasedSql) in one statement.
  const t = tablesOf(ctx.tenant.schema);
  const res = await sql<InfoRow>`
    select o.uuid, coalesce(${offerVisibleSql(ctx.tenant.schema, ctx.viewer)}, false) as visible, o.edition_uuid as "editionUuid",
      coalesce((select json_agg(h.organiser_uuid) from ${t('offer_hosts')} h where h.offer_uuid = o.uuid), '[]'::json) as hosts,
      case when e.uuid is null then false else ${editionListsReleasedSql(ctx.tenant.schema, 'e')} end as "listsReleased",
      coalesce((select json_agg(json_build_object('begin', extract(epoch from d."begin") * 1000,
          'end', extract(epoch from d."end") * 1000, 'recurrence', d.recurrence))
        from ${t('offer_dates')} d where d.offer_uuid = o.uuid), '[]'::json) as dates,
      ${editionHorizonSql(ctx.tenant.schema, 'o.edition_uuid')} as horizon
    from ${t('offers')} o
    left join ${t('editions')} e on e.uuid = o.edition_uuid
    where o.uuid = ${offerUuid}::uuid`.execute(db);
  const r = res.rows[0];
  if (!r) return null;
  let endMs: number | null = null;
  for (const d of r.dates) {
    const horizon = r.horizon === null ? null : new Date(r.horizon);
    const occurrences = expandOccurrences({ begin: new Date(d.begin), end: new Date(d.end), recurrence: d.recurrence, horizon });
    for (const o of occurrences) endMs = Math.max(endMs ?? -Infinity, o.end.getTime());
  }
  return { uuid: r.uuid, visible: r.visible, editionUuid: r.editionUuid, hosts: r.hosts, listsReleased: !!r.listsReleased, endMs };
}

/**
 * Spec 4.3: the caller may read the offer's participant list. Unknown (or invisible) offer: 404; an offer
 * without an edition: 403 for everyone; admins and the system: yes; organisers: own offer, released lists,
 * within the retention period, else 403; anyone else: 403. `list`: the list itself is asked for (spec 4.3
 * "Otherwise the answer is 403"), so an organiser gets 403 also for another organiser's offer it cannot see;
 * a single application of such an offer stays 404.
 */
export async function assertListReadable(
  ctx: ServiceContext, db: Executor, offerUuid: string, missing: () => Error = () => offerNotFound(offerUuid), opts: { list?: boolean } = {},
): Promise<OfferInfo> {
  const viewer = ctx.viewer;
  const info = await loadOfferInfo(ctx, db, offerUuid);
  if (!info || (!info.visible && !(opts.list && viewer.kind === 'organiser'))) throw missing();
  if (!info.editionUuid) throw forbidden(`The offer ${offerUuid} belongs to no edition; it has no participant list.`);
  switch (viewer.kind) {
    case 'admin':
    case 'system':
      return info;
    case 'organiser': {
      const access = organiserListAccess({
        ownOffer: ownsOffer(viewer, info.hosts),
        listsReleased: info.listsReleased,
        offerEnd: info.endMs === null ? null : new Date(info.endMs),
        retentionWeeks: ctx.tenant.settings.retentionWeeks,
        now: new Date(),
      });
      if (access !== 'ok') throw forbidden(listAccessDetail(access));
      return info;
    }
    default:
      throw forbidden('Participant lists are only for admins and organisers.');
  }
}

/** Organisers change lists (PATCH, transitions) only where the installation lets them (D2), on lists they can read. */
export async function assertListEditable(ctx: ServiceContext, db: Executor, offerUuid: string, missing?: () => Error): Promise<void> {
  await assertListReadable(ctx, db, offerUuid, missing);
  if (ctx.viewer.kind === 'organiser' && !ctx.tenant.settings.organisersEditParticipantLists) {
    throw forbidden('This installation does not let organisers edit their participant lists.');
  }
}

/**
 * Spec 4.3 "Transfer" rule 5: organisers only with organisersTransferParticipants and a list they can see; the
 * target offer must be one the viewer sees (404 otherwise); answers the target.
 */
export async function assertMayTransfer(
  ctx: ServiceContext, db: Executor, sourceUuid: string, targetUuid: string, missing?: () => Error,
): Promise<OfferInfo> {
  await assertListReadable(ctx, db, sourceUuid, missing);
  if (ctx.viewer.kind === 'organiser' && !ctx.tenant.settings.organisersTransferParticipants) {
    throw forbidden('This installation does not let organisers transfer participants.');
  }
  const target = await loadOfferInfo(ctx, db, targetUuid);
  if (!target || !target.visible) throw offerNotFound(targetUuid);
  return target;
}
