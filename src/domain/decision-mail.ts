// The family's e-mail when an edition's held-back decisions are committed (D7, D10 "Lot and commit"): one
// e-mail per family listing each child's decisions, to the account's address (the participant's own
// without an account), each child named by first name, the decision per offer, German text. Pure: the
// caller loads the released applications and queues the mails (D9 outbox, same transaction).

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

export interface FamilyMail {
  familyId: string;
  recipient: string;
  subject: string;
  body: string;
  /** The applications the mail reports, in the order listed. */
  attendanceIds: string[];
}

const DECISION_TEXT: Record<AttendanceState, string> = {
  confirmed: 'Platz erhalten',
  waitlisted: 'auf der Warteliste – wird ein Platz frei, melden wir uns',
  unfulfilled: 'leider kein Platz',
  rejected: 'Absage',
  withdrawn: 'abgemeldet',
  waiting: 'noch keine Entscheidung',
  participated: 'teilgenommen',
  noshow: 'nicht erschienen',
  email_unconfirmed: 'E-Mail-Adresse noch nicht bestätigt',
  consents_outstanding: 'Einverständnis fehlt noch',
};

const collator = new Intl.Collator('de', { sensitivity: 'base', numeric: true });

/** Cents as German euros: 1250 -> "12,50 €". */
export function formatEuro(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  const euros = Math.floor(abs / 100).toLocaleString('de-DE');
  return `${sign}${euros},${String(abs % 100).padStart(2, '0')} €`;
}

/** One line of the list: `- „Offer“: decision` (a confirmed place with a fee names the fee now due). */
export function decisionLine(d: Pick<ReleasedDecision, 'offerName' | 'status' | 'fee'>): string {
  const fee = d.status === 'confirmed' && (d.fee ?? 0) > 0 ? ` (Teilnahmebeitrag ${formatEuro(d.fee!)})` : '';
  return `- „${d.offerName}“: ${DECISION_TEXT[d.status]}${fee}`;
}

/**
 * One mail per family with a recipient, listing its children (by first name, German order) and, for each,
 * the decisions per offer (by offer name). Families without any address get no mail. Deterministic.
 */
export function composeDecisionMails(editionName: string, decisions: readonly ReleasedDecision[]): FamilyMail[] {
  const families = new Map<string, ReleasedDecision[]>();
  for (const d of decisions) {
    if (!d.recipient) continue;
    families.set(d.familyId, [...(families.get(d.familyId) ?? []), d]);
  }
  const mails: FamilyMail[] = [];
  for (const [familyId, list] of families) {
    const children = new Map<string, ReleasedDecision[]>();
    for (const d of list) children.set(d.participantId, [...(children.get(d.participantId) ?? []), d]);
    const ordered = [...children.values()]
      .map((ds) => ({ name: ds[0].firstname ?? 'Ihr Kind', id: ds[0].participantId, ds: [...ds].sort(byOffer) }))
      .sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const blocks = ordered.map((c) => [`${c.name}:`, ...c.ds.map(decisionLine)].join('\n'));
    const dueNote = list.some((d) => d.status === 'confirmed' && (d.fee ?? 0) > 0)
      ? '\nDie Teilnahmebeiträge für die erhaltenen Plätze sind ab jetzt fällig.\n'
      : '';
    const body = [
      'Guten Tag,',
      '',
      `für das Ferienprogramm „${editionName}“ stehen die Entscheidungen über Ihre Anmeldungen fest:`,
      '',
      blocks.join('\n\n'),
      dueNote,
      'Ihr Ferienprogramm-Team',
      '',
    ].join('\n');
    mails.push({
      familyId,
      // Every decision of one family goes to the same address (the account's, or the child's own).
      recipient: list[0].recipient!,
      subject: `Ergebnis der Platzvergabe: ${editionName}`,
      body,
      attendanceIds: ordered.flatMap((c) => c.ds.map((d) => d.attendanceId)),
    });
  }
  return mails.sort((a, b) => (a.recipient < b.recipient ? -1 : a.recipient > b.recipient ? 1 : 0) || (a.familyId < b.familyId ? -1 : 1));
}

function byOffer(a: ReleasedDecision, b: ReleasedDecision): number {
  return collator.compare(a.offerName, b.offerName) || (a.attendanceId < b.attendanceId ? -1 : a.attendanceId > b.attendanceId ? 1 : 0);
}
