import { DateTime } from 'luxon';
import type { AttendanceState } from '../../../domain/attendance-states.js';
import { familyDecisions, formatEuro as formatFee, type ReleasedDecision } from '../../../domain/decision-mail.js';
import { formatEuro } from '../../../domain/money.js';
import { ZONE } from '../../http/dates.js';

// Every e-mail the service writes, in German (D9): one function per mail, data in, subject and body out.
// The callers decide when a mail is sent and to whom; the outbox stores what these return.

export type MailText = { subject: string; body: string };

const SIGNATURE = 'Ihr Ferienprogramm-Team';

// ---- an application's state, to the family (spec 4.3; D9) ------------------------------------------------

const STATE_SUBJECTS: Record<AttendanceState, string> = {
  waiting: 'Anmeldung eingegangen',
  confirmed: 'Platzzusage',
  waitlisted: 'Warteliste',
  rejected: 'Absage',
  withdrawn: 'Abmeldung',
  unfulfilled: 'Leider kein Platz',
  participated: 'Teilnahme',
  noshow: 'Nicht erschienen',
  email_unconfirmed: 'Bitte E-Mail-Adresse bestätigen',
  consents_outstanding: 'Einverständnis fehlt',
};

function stateLine(status: AttendanceState, child: string, offer: string): string {
  const lines: Record<AttendanceState, string> = {
    waiting: `die Anmeldung von ${child} für „${offer}“ ist eingegangen. Über die Plätze wird noch entschieden.`,
    confirmed: `${child} hat einen Platz für „${offer}“ bekommen.`,
    waitlisted: `${child} steht für „${offer}“ auf der Warteliste. Wird ein Platz frei, melden wir uns.`,
    rejected: `für „${offer}“ können wir ${child} leider keinen Platz geben.`,
    withdrawn: `die Anmeldung von ${child} für „${offer}“ wurde zurückgezogen.`,
    unfulfilled: `bei der Platzvergabe für „${offer}“ hat ${child} leider keinen Platz bekommen.`,
    participated: `schön, dass ${child} an „${offer}“ teilgenommen hat.`,
    noshow: `${child} ist zu „${offer}“ nicht erschienen.`,
    email_unconfirmed: `bitte bestätigen Sie Ihre E-Mail-Adresse für die Anmeldung von ${child} zu „${offer}“.`,
    consents_outstanding: `für die Anmeldung von ${child} zu „${offer}“ fehlt noch ein Einverständnis.`,
  };
  return lines[status];
}

/** The application's current state; `firstname` null (unknown, pseudonymised): "Ihr Kind". */
export function applicationStateMail(m: { status: AttendanceState; offerName: string; firstname: string | null }): MailText {
  return {
    subject: `${STATE_SUBJECTS[m.status]}: ${m.offerName}`,
    body: `Guten Tag,\n\n${stateLine(m.status, m.firstname ?? 'Ihr Kind', m.offerName)}\n\n${SIGNATURE}\n`,
  };
}

// ---- an edition's committed decisions, one mail per family (D7, D10 "Lot and commit") ---------------------

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

/** One line of the list: `- „Offer“: decision` (a confirmed place with a fee names the fee now due). */
export function decisionLine(d: Pick<ReleasedDecision, 'offerName' | 'status' | 'fee'>): string {
  const fee = d.status === 'confirmed' && (d.fee ?? 0) > 0 ? ` (Teilnahmebeitrag ${formatFee(d.fee!)})` : '';
  return `- „${d.offerName}“: ${DECISION_TEXT[d.status]}${fee}`;
}

/** One family's mail about an edition's decisions, as the outbox stores it. */
export interface FamilyMail {
  familyId: string;
  recipient: string;
  subject: string;
  body: string;
  /** The applications the mail reports, in the order listed. */
  attendanceIds: string[];
}

/**
 * One mail per family with a recipient, listing its children (by first name, German order) and, for each,
 * the decisions per offer (by offer name); who is in which mail is domain/decision-mail.ts's. Deterministic.
 */
export function composeDecisionMails(editionName: string, decisions: readonly ReleasedDecision[]): FamilyMail[] {
  return familyDecisions(decisions).map(({ familyId, recipient, children, feesDue }) => {
    const blocks = children.map((c) => [`${c.name}:`, ...c.decisions.map(decisionLine)].join('\n'));
    const dueNote = feesDue ? '\nDie Teilnahmebeiträge für die erhaltenen Plätze sind ab jetzt fällig.\n' : '';
    const body = [
      'Guten Tag,',
      '',
      `für das Ferienprogramm „${editionName}“ stehen die Entscheidungen über Ihre Anmeldungen fest:`,
      '',
      blocks.join('\n\n'),
      dueNote,
      SIGNATURE,
      '',
    ].join('\n');
    return {
      familyId,
      recipient,
      subject: `Ergebnis der Platzvergabe: ${editionName}`,
      body,
      attendanceIds: children.flatMap((c) => c.decisions.map((d) => d.attendanceId)),
    };
  });
}

// ---- an offer cancelled or taking place again, to the families with a place (D5) --------------------------

export function offerCancelledMail(offerName: string): MailText {
  return { subject: `Abgesagt: ${offerName}`, body: `Guten Tag,\n\ndas Angebot „${offerName}“ wurde leider abgesagt.\n` };
}

export function offerRelaunchedMail(offerName: string): MailText {
  return { subject: `Findet wieder statt: ${offerName}`, body: `Guten Tag,\n\ndas Angebot „${offerName}“ findet nun doch statt.\n` };
}

// ---- receipts and their reversal, to the debtor (D8) -------------------------------------------------------

type ReceiptItem = { text: string | null; amount: number };

const berlinDate = (d: Date) => DateTime.fromJSDate(d, { zone: ZONE }).toFormat('dd.MM.yyyy');

function receiptLines(items: readonly ReceiptItem[]): string {
  return items.map((i) => `- ${i.text ?? 'Teilnahmebeitrag'}: ${formatEuro(i.amount)}`).join('\n');
}

export function receiptMail(m: { number: string; paidAt: Date; items: readonly ReceiptItem[]; total: number }): MailText {
  return {
    subject: `Quittung ${m.number}`,
    body: `Guten Tag,\n\nvielen Dank für Ihre Zahlung. Quittung ${m.number} vom ${berlinDate(m.paidAt)}:\n\n`
      + `${receiptLines(m.items)}\n\nSumme: ${formatEuro(m.total)}\n\n${SIGNATURE}\n`,
  };
}

/** `items`: the reversed lines with their negated amounts; `withdrawn`: the applications were withdrawn. */
export function receiptReversalMail(m: {
  number: string; reversalNumber: string; paidAt: Date; items: readonly ReceiptItem[]; total: number; withdrawn: boolean;
}): MailText {
  return {
    subject: `Storno der Quittung ${m.number}`,
    body: `Guten Tag,\n\ndie Quittung ${m.number} wurde am ${berlinDate(m.paidAt)} storniert (Stornobeleg ${m.reversalNumber}):\n\n`
      + `${receiptLines(m.items)}\n\nSumme: ${formatEuro(m.total)}\n`
      + (m.withdrawn ? '\nDie betroffenen Anmeldungen wurden zurückgezogen.\n' : '\nDie Beiträge sind damit wieder offen.\n')
      + `\n${SIGNATURE}\n`,
  };
}

// ---- a webhook switched off, to the installation's admin (issue 14) ----------------------------------------

export function webhookDisabledMail(m: { webhook: string; url: string; tenantName: string; failingSince: Date }): MailText {
  const since = m.failingSince.toLocaleString('de-DE', { timeZone: ZONE, dateStyle: 'medium', timeStyle: 'short' });
  return {
    subject: 'Webhook abgeschaltet: Zustellung seit 24 Stunden fehlgeschlagen',
    body: [
      'Guten Tag,',
      '',
      `der Webhook ${m.webhook} (${m.url}) von ${m.tenantName} wurde abgeschaltet: seit ${since} Uhr hat sein Empfänger keine`,
      'Zustellung mehr mit einem Status 2xx beantwortet.',
      '',
      'Die Zustellversuche zeigt GET /webhooks/{uuid}/deliveries. Sobald der Empfänger wieder erreichbar ist, schaltet',
      'PATCH /webhooks/{uuid} mit {"enabled": true} ihn wieder ein; die Ereignisse seither werden dann der Reihe nach zugestellt.',
      '',
      '(The webhook was disabled after 24 hours of failed deliveries; enable it again with PATCH {"enabled": true}.)',
    ].join('\n'),
  };
}

// ---- a family's own application (issue 21, D11) -----------------------------------------------------------

/** One child of a family's application with its offers (and, once known, each application's state). */
export type FamilyChild = { firstname: string; offers: { offerName: string; status?: AttendanceState; fee?: number | null }[] };

function childBlocks(children: readonly FamilyChild[], withState: boolean): string {
  return children.map((c) => [`${c.firstname}:`, ...c.offers.map((o) =>
    (withState && o.status ? decisionLine({ offerName: o.offerName, status: o.status, fee: o.fee ?? null }) : `- „${o.offerName}“`))].join('\n')).join('\n\n');
}

/** The double opt-in: the family confirms its address before its applications count (D11). */
export function familyConfirmationMail(m: { programme: string; link: string; hours: number; children: readonly FamilyChild[] }): MailText {
  return {
    subject: `Bitte bestätigen Sie Ihre Anmeldung: ${m.programme}`,
    body: [
      'Guten Tag,',
      '',
      `vielen Dank für Ihre Anmeldung für das Ferienprogramm (${m.programme}). Sie haben angemeldet:`,
      '',
      childBlocks(m.children, false),
      '',
      'Bitte bestätigen Sie Ihre E-Mail-Adresse mit diesem Link, damit die Anmeldung gilt:',
      '',
      m.link,
      '',
      `Der Link gilt ${m.hours} Stunden und nur einmal. Erst mit der Bestätigung wird über die Plätze entschieden; ohne sie verfällt die Anmeldung.`,
      'Haben Sie sich nicht angemeldet, brauchen Sie nichts zu tun.',
      '',
      SIGNATURE,
      '',
    ].join('\n'),
  };
}

/** The guardian's consent for a child whose guardian is not the applicant (D11). */
export function guardianConsentMail(m: { programme: string; link: string; hours: number; child: string; applicant: string; offers: readonly string[] }): MailText {
  return {
    subject: `Einverständnis erbeten: Anmeldung von ${m.child}`,
    body: [
      'Guten Tag,',
      '',
      `${m.applicant} hat ${m.child} für das Ferienprogramm (${m.programme}) angemeldet und Sie als sorgeberechtigte Person genannt:`,
      '',
      ...m.offers.map((o) => `- „${o}“`),
      '',
      'Wenn Sie einverstanden sind, bestätigen Sie es bitte mit diesem Link:',
      '',
      m.link,
      '',
      `Der Link gilt ${m.hours} Stunden und nur einmal. Ohne Ihr Einverständnis verfällt die Anmeldung.`,
      '',
      SIGNATURE,
      '',
    ].join('\n'),
  };
}

/** Where a family's applications stand after it applied (address vouched for by the website) or confirmed. */
export function familyApplicationStateMail(m: { programme: string; children: readonly FamilyChild[] }): MailText {
  return {
    subject: `Ihre Anmeldung: ${m.programme}`,
    body: [
      'Guten Tag,',
      '',
      `Ihre Anmeldung für das Ferienprogramm (${m.programme}) ist eingegangen und bestätigt. So steht es:`,
      '',
      childBlocks(m.children, true),
      '',
      SIGNATURE,
      '',
    ].join('\n'),
  };
}
