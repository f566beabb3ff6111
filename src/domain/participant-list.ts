// Participant-list order, vacancies and the decision on creation: spec 2.2 `sorting`, 3.2, 4.3; D10.

export type CreateStatus = 'confirmed' | 'waitlisted' | 'waiting';

export interface SortableApplication {
  id: string;
  status: string;
  sorting: number | null;
  createdAt: Date;
}

// D10: confirmed, then waitlisted, then waiting, then the rest.
/** The states with a group of their own, in list order; every other state is in the last group (`REST_GROUP`). */
export const LIST_GROUPS = ['confirmed', 'waitlisted', 'waiting'] as const;
const GROUP: Record<string, number> = Object.fromEntries(LIST_GROUPS.map((status, i) => [status, i]));
const REST_GROUP = LIST_GROUPS.length;
/** The group of a state on the participant list (D10): 0 confirmed, 1 waitlisted, 2 waiting, 3 the rest. */
const groupOf = (status: string) => GROUP[status] ?? REST_GROUP;

/**
 * Returns the applications in participant-list order, renumbered 1..n (D10). Each group keeps its previous
 * `sorting` order; new ones (sorting null) go to the end of their group by createdAt. Ties fall back to
 * createdAt and then id so the result is deterministic.
 */
export function sortParticipantList<T extends SortableApplication>(applications: readonly T[]): Array<T & { sorting: number }> {
  const sorted = [...applications].sort((a, b) => {
    const g = groupOf(a.status) - groupOf(b.status);
    if (g !== 0) return g;
    if (a.sorting !== null && b.sorting !== null && a.sorting !== b.sorting) return a.sorting - b.sorting;
    if (a.sorting === null && b.sorting !== null) return 1;
    if (a.sorting !== null && b.sorting === null) return -1;
    const t = a.createdAt.getTime() - b.createdAt.getTime();
    if (t !== 0) return t;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
  return sorted.map((a, i) => ({ ...a, sorting: i + 1 }));
}

/**
 * A new application appended to a list already numbered 1..n in list order (as every write leaves it): the
 * position `sortParticipantList` gives it (the end of its group: one after every application of its group and
 * the groups before) and the applications behind it, which move down by one. The same rule as sorting the
 * whole list again, in one step that needs only counts: what the create statement does under the offer's
 * lock (src/engines/participant-list `appendApplication`). Returns null when `applications` is not
 * numbered 1..n in list order (then the whole list must be sorted).
 */
export function appendPosition<T extends SortableApplication>(applications: readonly T[], status: string): { sorting: number; behind: T[] } | null {
  if (!numberedInOrder(applications)) return null;
  const group = groupOf(status);
  const ahead = applications.filter((a) => groupOf(a.status) <= group).length;
  return { sorting: ahead + 1, behind: applications.filter((a) => groupOf(a.status) > group) };
}

/** Whether the list is numbered 1..n and in list order already (groups in order, D10). */
export function numberedInOrder(applications: readonly SortableApplication[]): boolean {
  const byPosition = [...applications].sort((a, b) => (a.sorting ?? 0) - (b.sorting ?? 0));
  return byPosition.every((a, i) => a.sorting === i + 1 && (i === 0 || groupOf(byPosition[i - 1]!.status) <= groupOf(a.status)));
}

/** Places left (D10: maxParticipants − confirmed); null when unlimited; never below 0. */
export function vacancies(maxParticipants: number | null, confirmedCount: number): number | null {
  if (maxParticipants === null) return null;
  return Math.max(0, maxParticipants - confirmedCount);
}

/** `fullyBooked` (spec 2.3): no places left; an unlimited offer is never fully booked. */
/**
 * Confirmed places beyond the offer's capacity (issue 13: an admin may confirm past it); 0 when there are none
 * or places are unlimited.
 */
export function overbooked(maxParticipants: number | null, confirmedCount: number): number {
  if (maxParticipants === null) return 0;
  return Math.max(0, confirmedCount - maxParticipants);
}

/**
 * Whether confirming one more application (with `confirmedOthers` other confirmed places, held back or not)
 * takes the offer past its capacity: such a confirmation is allowed for the team, and recorded.
 */
export function confirmsBeyondCapacity(maxParticipants: number | null, confirmedOthers: number): boolean {
  return maxParticipants !== null && confirmedOthers >= maxParticipants;
}

/** `decisionReason` of a confirmation past the offer's capacity (spec 2.2; issue 13). */
export function beyondCapacityReason(role: 'admin' | 'organiser' | null): string {
  const who = role === 'organiser' ? 'einen Veranstalter' : 'einen Admin';
  return `Durch ${who} über die Kapazität des Angebots hinaus bestätigt (confirmed beyond the offer's capacity)`;
}

export function fullyBooked(maxParticipants: number | null, confirmedCount: number): boolean {
  return vacancies(maxParticipants, confirmedCount) === 0;
}

/**
 * State of a new (or reused) application (spec 3.2, 4.3): an explicit `status` wins; otherwise first come
 * first served confirms while places remain (vacancies null = unlimited) and waitlists otherwise; a lot
 * edition leaves it `waiting` until the allocation.
 */
export function decideOnCreate(input: {
  procedure: 'firstcome' | 'lot';
  requestedStatus?: CreateStatus | null;
  vacancies: number | null;
}): CreateStatus {
  if (input.requestedStatus) return input.requestedStatus;
  if (input.procedure === 'lot') return 'waiting';
  return input.vacancies === null || input.vacancies > 0 ? 'confirmed' : 'waitlisted';
}

/**
 * The two decisions `decideOnCreate` can make before the places are counted: with a place free (or places
 * unlimited), and with none. Under the offer's lock the database only tests for a free place
 * (`maxParticipants` is null or the confirmed are fewer) and takes one of them, in the same statement as the
 * insert.
 */
export function decisionsOnCreate(input: { procedure: 'firstcome' | 'lot'; requestedStatus?: CreateStatus | null }): { placeFree: CreateStatus; full: CreateStatus } {
  return {
    placeFree: decideOnCreate({ ...input, vacancies: null }),
    full: decideOnCreate({ ...input, vacancies: 0 }),
  };
}

/**
 * Refill (spec 4.2, D10): the waitlisted applications to confirm, in participant-list order, to fill
 * the free places. `applications` must already be sorted.
 */
export function refillCandidates<T extends { status: string }>(sortedApplications: readonly T[], freePlaces: number | null): T[] {
  const waitlisted = sortedApplications.filter((a) => a.status === 'waitlisted');
  return freePlaces === null ? waitlisted : waitlisted.slice(0, Math.max(0, freePlaces));
}

/**
 * The list after a batch of decisions made in a known order (D7: the lot's `waitlisted` follow the draw).
 * Each application in `ranks` (already carrying its new status) moves to the end of its new group, behind the
 * group's earlier members, in rank order (lower first); everyone else keeps their place. Renumbered 1..n.
 */
export function sortAfterDecisions<T extends SortableApplication>(
  applications: readonly T[], ranks: ReadonlyMap<string, number>,
): Array<T & { sorting: number }> {
  let offset = 0;
  for (const a of applications) if (!ranks.has(a.id) && a.sorting !== null) offset = Math.max(offset, a.sorting);
  const placed = applications.map((a) => {
    const rank = ranks.get(a.id);
    return rank === undefined ? a : { ...a, sorting: offset + rank };
  });
  // The original objects (not the copies with a provisional sorting) come back, renumbered.
  const byId = new Map(applications.map((a) => [a.id, a]));
  return sortParticipantList(placed).map((a) => ({ ...byId.get(a.id)!, sorting: a.sorting }));
}
