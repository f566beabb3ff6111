import type { ErrorCode } from './errors.js';

// Offer places and transitions: D5 table; permission before state and offers without dates (D10).

export const OFFER_PLACES = ['draft', 'completed', 'reviewed', 'published', 'cancelled', 'unpublished'] as const;
export type OfferPlace = (typeof OFFER_PLACES)[number];

export const OFFER_TRANSITIONS = ['complete', 'approve', 'unapprove', 'publish', 'cancel', 'relaunch', 'unpublish'] as const;
export type OfferTransition = (typeof OFFER_TRANSITIONS)[number];

export type OfferRole = 'admin' | 'organiser';

/** The marking an offer can be in; `status` is this list (spec 2.3, D5). */
export type OfferStatus = OfferPlace[];

export function isOfferPlace(value: unknown): value is OfferPlace {
  return typeof value === 'string' && (OFFER_PLACES as readonly string[]).includes(value);
}

export function isOfferTransition(value: unknown): value is OfferTransition {
  return typeof value === 'string' && (OFFER_TRANSITIONS as readonly string[]).includes(value);
}

/** Places in canonical order without duplicates, e.g. ['published', 'cancelled']. */
export function normalizePlaces(places: readonly OfferPlace[]): OfferStatus {
  return OFFER_PLACES.filter((p) => places.includes(p));
}

const has = (places: readonly OfferPlace[], p: OfferPlace) => places.includes(p);
const isOnly = (places: readonly OfferPlace[], p: OfferPlace) => places.length === 1 && places[0] === p;

// D5 table: `from` tests the current marking, `to` is the new one.
const DEFINITIONS: Record<OfferTransition, { from: (p: readonly OfferPlace[]) => boolean; to: OfferStatus }> = {
  complete: { from: (p) => isOnly(p, 'draft'), to: ['completed'] },
  approve: { from: (p) => isOnly(p, 'draft') || isOnly(p, 'completed'), to: ['reviewed'] },
  unapprove: { from: (p) => isOnly(p, 'reviewed'), to: ['completed'] },
  publish: {
    from: (p) => ['draft', 'completed', 'reviewed', 'unpublished'].some((s) => isOnly(p, s as OfferPlace)),
    to: ['published'],
  },
  // D10: cancel on an already cancelled offer is a state conflict.
  cancel: { from: (p) => has(p, 'published') && !has(p, 'cancelled'), to: ['published', 'cancelled'] },
  relaunch: { from: (p) => has(p, 'published') && has(p, 'cancelled'), to: ['published'] },
  unpublish: { from: (p) => has(p, 'published'), to: ['unpublished'] },
};

export interface OfferCaller {
  role: OfferRole;
  /** The offer belongs to one of the organiser's organisers (irrelevant for admins). */
  ownOffer: boolean;
  /** Begin of the offer's first date; null when the offer has no dates. */
  firstDateBegin: Date | null;
  now: Date;
}

/**
 * Whether the caller may apply the transition at all, whatever the offer's state (D10: permission first).
 * Admins: everything. Organisers, on their own offers only: `complete`; `cancel`/`relaunch` before the
 * first date begins, or always when the offer has no dates (D5, D10).
 */
export function mayApplyOfferTransition(transition: OfferTransition, caller: OfferCaller): boolean {
  if (caller.role === 'admin') return true;
  if (!caller.ownOffer) return false;
  if (transition === 'complete') return true;
  if (transition === 'cancel' || transition === 'relaunch') {
    return caller.firstDateBegin === null || caller.now.getTime() < caller.firstDateBegin.getTime();
  }
  return false;
}

/** Transitions the current marking allows, ignoring permissions. */
export function offerTransitionsFromPlaces(places: readonly OfferPlace[]): OfferTransition[] {
  const marking = normalizePlaces(places);
  return OFFER_TRANSITIONS.filter((t) => DEFINITIONS[t].from(marking));
}

/** The offer's `transitions` list: what this caller may apply now (D5). */
export function offerTransitionsFor(input: OfferCaller & { places: readonly OfferPlace[] }): OfferTransition[] {
  return offerTransitionsFromPlaces(input.places).filter((t) => mayApplyOfferTransition(t, input));
}

export type OfferTransitionResult =
  | { ok: true; transition: OfferTransition; from: OfferStatus; to: OfferStatus }
  | { ok: false; reason: 'unknown_transition'; code: Extract<ErrorCode, 'unknown_transition'>; detail: string }
  | { ok: false; reason: 'forbidden'; code: Extract<ErrorCode, 'not_permitted'>; detail: string }
  | {
      ok: false;
      reason: 'not_allowed';
      code: Extract<ErrorCode, 'state_conflict'>;
      detail: string;
      current: OfferStatus;
      possible: OfferTransition[];
    };

/** Checks a transition request: the name, then permission, then state, in this order (spec 3.4, D10). */
export function applyOfferTransition(
  input: OfferCaller & { places: readonly OfferPlace[]; transition: string },
): OfferTransitionResult {
  const { transition } = input;
  if (!isOfferTransition(transition)) {
    return {
      ok: false,
      reason: 'unknown_transition',
      code: 'unknown_transition',
      detail: `transition: "${transition}" is not an offer transition; known: ${OFFER_TRANSITIONS.join(', ')}.`,
    };
  }
  if (!mayApplyOfferTransition(transition, input)) {
    return {
      ok: false,
      reason: 'forbidden',
      code: 'not_permitted',
      detail: `You may not apply the transition "${transition}" to this offer.`,
    };
  }
  const current = normalizePlaces(input.places);
  if (!DEFINITIONS[transition].from(current)) {
    const possible = offerTransitionsFor(input);
    return {
      ok: false,
      reason: 'not_allowed',
      code: 'state_conflict',
      current,
      possible,
      detail:
        `Transition "${transition}" is not possible from state "${current.join(', ')}". ` +
        `Possible transitions: ${possible.length ? possible.join(', ') : 'none'}.`,
    };
  }
  return { ok: true, transition, from: current, to: [...DEFINITIONS[transition].to] };
}

/** `status` filter (D10): an offer matches when any requested place is among its places. */
export function matchesStatusFilter(places: readonly OfferPlace[], wanted: readonly OfferPlace[]): boolean {
  return wanted.some((w) => places.includes(w));
}
