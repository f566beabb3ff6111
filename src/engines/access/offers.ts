import type { OfferRole } from '../../domain/offer-workflow.js';
import type { Viewer } from '../../platform/auth/viewer.js';
import { sql, tablesOf, type RawBuilder } from '../../platform/db/sql.js';
import { forbidden, notFound } from '../../domain/errors.js';
import { editionOnlineSql } from '../edition-phases/index.js';

// Which offers a viewer sees and may change (spec 4.2, 5; D5). The one place for it: the offers' projection
// and the participant-list checks (lists.ts) use the same SQL. Kinds this module does not know see nothing.

export const offerNotFound = (uuid: string) => notFound(`No offer with the identifier ${uuid} exists, or you may not see it.`);

/**
 * The offers the viewer may see, as a condition on `o` (offers) and `e` (its edition): admins and the system
 * all; organisers published and their own; the public (anonymous, legacy and website tokens) published, publicly listed
 * offers of an edition that is online (D4). Raw SQL: a condition inside the offers' projection and lists.ts's.
 */
export function offerVisibleSql(schema: string, viewer: Viewer): RawBuilder<boolean> {
  switch (viewer.kind) {
    case 'admin':
    case 'system':
      return sql<boolean>`true`;
    case 'organiser':
      return sql<boolean>`('published' = any(o.places) or exists (select 1 from ${tablesOf(schema)('offer_hosts')} vh
        where vh.offer_uuid = o.uuid and vh.organiser_uuid = any(${[...viewer.organiserIds]}::uuid[])))`;
    case 'anonymous':
    case 'legacy':
    case 'website':
      return sql<boolean>`('published' = any(o.places) and o.publish = 'public' and ${editionOnlineSql(schema, 'e')})`;
    default:
      return sql<boolean>`false`;
  }
}

/**
 * How the viewer reads an offer: with the internal fields and the transitions of `role`, or as the public
 * does (null: no comment, contact, counts by state, variants or transitions).
 */
export function offerReaderRole(viewer: Viewer): OfferRole | null {
  switch (viewer.kind) {
    case 'admin':
    case 'system':
      return 'admin';
    case 'organiser':
      return 'organiser';
    default:
      return null;
  }
}

/** Whether the viewer is an organiser of one of the offer's hosts. */
export function ownsOffer(viewer: Viewer, hosts: readonly string[]): boolean {
  return viewer.kind === 'organiser' && hosts.some((h) => viewer.organiserIds.includes(h));
}

/**
 * The viewer's standing for a change of one offer: `admin` (admins, the system) change any offer; `own` an
 * organiser of a host; `foreign` an organiser who sees the (published) offer but is no host; `hidden` anyone
 * who may not see it, or may not change offers at all.
 */
export type OfferStanding = 'admin' | 'own' | 'foreign' | 'hidden';

export function offerStanding(viewer: Viewer, offer: { hosts: readonly string[]; published: boolean }): OfferStanding {
  switch (viewer.kind) {
    case 'admin':
    case 'system':
      return 'admin';
    case 'organiser':
      if (ownsOffer(viewer, offer.hosts)) return 'own';
      return offer.published ? 'foreign' : 'hidden';
    default:
      return 'hidden';
  }
}

/** Create, update, delete, copy, variant: 404 for an offer the viewer cannot see, 403 for another's. */
export function assertMayChangeOffer(viewer: Viewer, uuid: string, offer: { hosts: readonly string[]; published: boolean }): void {
  const standing = offerStanding(viewer, offer);
  if (standing === 'hidden') throw offerNotFound(uuid);
  if (standing === 'foreign') throw forbidden('Organisers may only change the offers of their own organisers.');
}

/** The hosts an offer is given on create or update: organisers name only (and at least one of) their own. */
export function assertMayHost(viewer: Viewer, hosts: readonly string[]): void {
  if (viewer.kind === 'admin' || viewer.kind === 'system') return;
  if (viewer.kind !== 'organiser' || hosts.length === 0 || hosts.some((h) => !viewer.organiserIds.includes(h))) {
    throw forbidden('Organisers may only create and change offers of their own organisers.');
  }
}
