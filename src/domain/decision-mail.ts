// The family's e-mail when an edition's held-back decisions are committed (D7, D10 "Lot and commit"): one
// e-mail per family listing each child's decisions, to the account's address (the participant's own
// without an account), each child named by first name, the decision per offer. Pure: who gets which mail
// is here, its German text in src/platform/mail/templates/de.ts; the caller loads the released
// applications and queues the mails (D9 outbox, same transaction).

import type { AttendanceState } from './attendance-states.js';

export interface ReleasedDecision {
  attendanceId: string;
  /** The family: the account's id, or the participant's own id when it has no account. */
  familyId: string;
  /** The account's e-mail, else the participant's own; null: nobody to write to. */
  recipient: string | null;
  participantId: string;
  /** First name; null when unknown or pseudonymised. */
  firstname: string | null;
  offerName: string;
  status: AttendanceState;
  /** Fee in cents that becomes due for a confirmed place; null or 0: free. */
  fee: number | null;
}

const collator = new Intl.Collator('de', { sensitivity: 'base', numeric: true });

/** Cents as German euros: 1250 -> "12,50 €". */
export function formatEuro(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const euros = Math.floor(abs / 100).toLocaleString('de-DE');
  return `${sign}${euros},${String(abs % 100).padStart(2, '0')} €`;
}

/** One family's decisions, as its mail lists them: children by first name (German order), offers by name. */
export interface FamilyDecisions {
  familyId: string;
  recipient: string;
  children: { name: string; decisions: ReleasedDecision[] }[];
  /** A confirmed place with a fee: the fees are due from now on. */
  feesDue: boolean;
}

/**
 * The families to write to (those with a recipient), each with its children and their decisions, ordered by
 * recipient. Deterministic. The text is src/platform/mail/templates/de.ts's (composeDecisionMails).
 */
export function familyDecisions(decisions: readonly ReleasedDecision[]): FamilyDecisions[] {
  const families = new Map<string, ReleasedDecision[]>();
  for (const d of decisions) {
    if (!d.recipient) continue;
    families.set(d.familyId, [...(families.get(d.familyId) ?? []), d]);
  }
  const out: FamilyDecisions[] = [];
  for (const [familyId, list] of families) {
    const children = new Map<string, ReleasedDecision[]>();
    for (const d of list) children.set(d.participantId, [...(children.get(d.participantId) ?? []), d]);
    const ordered = [...children.values()]
      .map((ds) => ({ name: ds[0].firstname ?? 'Ihr Kind', id: ds[0].participantId, ds: [...ds].sort(byOffer) }))
      .sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    out.push({
      familyId,
      // Every decision of one family goes to the same address (the account's, or the child's own).
      recipient: list[0].recipient!,
      children: ordered.map((c) => ({ name: c.name, decisions: c.ds })),
      feesDue: list.some((d) => d.status === 'confirmed' && (d.fee ?? 0) > 0),
    });
  }
  return out.sort((a, b) => (a.recipient < b.recipient ? -1 : a.recipient > b.recipient ? 1 : 0) || (a.familyId < b.familyId ? -1 : 1));
}

function byOffer(a: ReleasedDecision, b: ReleasedDecision): number {
  return collator.compare(a.offerName, b.offerName) || (a.attendanceId < b.attendanceId ? -1 : a.attendanceId > b.attendanceId ? 1 : 0);
}
