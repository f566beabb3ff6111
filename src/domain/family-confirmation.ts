// The confirmations a family's own application waits for (D11; issue 21 items 4, 5): the family's e-mail
// address (double opt-in) and, for a child whose guardian is someone else, the guardian's consent. Spec 3.1
// names the states: `email_unconfirmed` (applied without an account whose address is proven) and
// `consents_outstanding` (waiting for a guardian's consent); `consentOutstanding` (spec 2.2) says the consent
// is missing. Both may be outstanding at once: the application is then `email_unconfirmed` with
// `consentOutstanding: true`. It leaves the system states only when neither is outstanding; then the edition's
// procedure decides as for any new application (first come first served: at that moment, so in the order of
// confirmation). D10 lists `await_email` and `await_consents` among a `waiting` application's transitions
// (system-only); the system applies them here: a submission's applications wait in these states instead of
// `waiting`, and a confirmation or consent completes the wait (the status change's `cause` names it).

import type { AttendanceState } from './attendance-states.js';

/** How long a confirmation or consent link is valid (D11: 72 h). */
export const CONFIRMATION_HOURS = 72;

export type Outstanding = { email: boolean; consent: boolean };

/** The state while something is outstanding; null when nothing is (the procedure decides). */
export function waitingState(o: Outstanding): Extract<AttendanceState, 'email_unconfirmed' | 'consents_outstanding'> | null {
  if (o.email) return 'email_unconfirmed';
  if (o.consent) return 'consents_outstanding';
  return null;
}

/** What is outstanding for an application in `status` with `consentOutstanding`. */
export function outstandingOf(a: { status: AttendanceState; consentOutstanding: boolean }): Outstanding {
  return { email: a.status === 'email_unconfirmed', consent: a.consentOutstanding };
}

/** Whether a status is one of the two waits of the family channel. */
export function isAwaitingConfirmation(status: AttendanceState): boolean {
  return status === 'email_unconfirmed' || status === 'consents_outstanding';
}

/**
 * After the family's address was confirmed (`await_email` completed) or the guardian consented
 * (`await_consents` completed): the new wait, or null when the application leaves the system states.
 * An application no longer waiting for that confirmation (withdrawn meanwhile, decided) is left alone: `same`.
 */
export function afterConfirmation(
  a: { status: AttendanceState; consentOutstanding: boolean }, what: 'email' | 'consent',
): { next: 'same' } | { next: 'wait'; status: 'email_unconfirmed' | 'consents_outstanding'; consentOutstanding: boolean } | { next: 'decide'; consentOutstanding: false } {
  const now = outstandingOf(a);
  if (!isAwaitingConfirmation(a.status) || !now[what]) return { next: 'same' };
  const rest = { ...now, [what]: false };
  const wait = waitingState(rest);
  return wait ? { next: 'wait', status: wait, consentOutstanding: rest.consent } : { next: 'decide', consentOutstanding: false };
}

/** D11: a guardian's consent is needed when the child names a guardian address other than the account's. */
export function needsConsent(guardianEmail: string | null | undefined, accountEmail: string): boolean {
  if (!guardianEmail) return false;
  return guardianEmail.trim().toLowerCase() !== accountEmail.trim().toLowerCase();
}

/** When a link sent at `sentAt` stops working. */
export function confirmationExpiry(sentAt: Date): Date {
  return new Date(sentAt.getTime() + CONFIRMATION_HOURS * 3_600_000);
}

/**
 * The link of a confirmation mail from the tenant's template (`{token}` replaced); the default is
 * `https://<first host>/anmeldung/<path>/{token}`.
 */
export function confirmationLink(template: string | undefined, firstHost: string | undefined, path: 'bestaetigen' | 'einwilligen', token: string): string {
  const t = template ?? `https://${firstHost ?? 'localhost'}/anmeldung/${path}/{token}`;
  return t.replaceAll('{token}', encodeURIComponent(token));
}
