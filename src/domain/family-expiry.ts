// What happens when a family's confirmation or consent link expires (D11; issue 21 item 4: "Links expire after
// 72 h; a job withdraws expired unconfirmed applications and deletes what the unconfirmed submission created
// (children, an account that has nothing else)"), and when the family applies again afterwards.
//
// - The applications still waiting for the expired link are withdrawn (the state machine's `withdraw`, spec 3.2;
//   decision reason EXPIRED_REASON). An e-mail link: the submission's `email_unconfirmed` applications. A consent
//   link: its child's applications still waiting for that consent (`consentOutstanding`).
// - An e-mail link only (the address was never proven, so what the submission made is nobody's): a child that an
//   unconfirmed submission made is deleted with all its applications (and their answer files) when it has
//   nothing else: every application of it is expiring now or was withdrawn by an earlier expiry of an
//   unconfirmed submission, none is paid, and no other record (a debtor) names it. A child made by an earlier
//   unconfirmed submission whose deletion waited for this one's application goes now too.
// - The account goes (with its last child) when an unconfirmed submission made it, no submission of it ever had
//   its address confirmed (or vouched for by the website), no child of it stays, and no other record names it.
// - Everything else stays: a child that existed before (made by the team, or by a confirmed submission) keeps
//   its applications, the expired ones as `withdrawn`; a consent link's expiry deletes nothing (the family's
//   address is confirmed, its children are its own).
// - Applying again: an application withdrawn by expiry (and untouched since: any later transition clears the
//   reason) does not make the same child's wish for that offer a duplicate; the new wish reuses it (one
//   application per child and offer, spec 4.3 "Create"). Any other application for that child and offer is a 409.

import { applySystemTransition, isAttendanceState, type AttendanceState } from './attendance-states.js';
import { isAwaitingConfirmation } from './family-confirmation.js';

/** `decisionReason` of an application withdrawn because its link expired (German like the other reasons). */
export const EXPIRED_REASON = 'Verfallen: nicht innerhalb von 72 Stunden bestätigt';

export type ExpiredLink = { kind: 'email' | 'consent'; submission: string; participant: string | null };

export type ExpiryApplication = {
  uuid: string;
  participant: string;
  /** The submission it came with; null: made by the team. */
  submission: string | null;
  /** That submission's address was confirmed, or vouched for by the website. */
  submissionConfirmed: boolean;
  status: AttendanceState;
  consentOutstanding: boolean;
  decisionReason: string | null;
  paid: boolean;
};

export type ExpiryChild = {
  uuid: string;
  /** Made by the expired link's submission. */
  madeByThisSubmission: boolean;
  /** Made by a submission whose address was never confirmed (this one, or an earlier one). */
  madeByUnconfirmedSubmission: boolean;
  /** Named by a record other than its applications (a debtor). */
  referencedElsewhere: boolean;
};

export type ExpiryAccount = {
  uuid: string;
  madeByUnconfirmedSubmission: boolean;
  /** Some submission of this account had its address confirmed (or vouched for). */
  addressConfirmed: boolean;
  referencedElsewhere: boolean;
};

export type ExpiryPlan = {
  /** Applications kept, withdrawn. */
  withdraw: string[];
  /** Children deleted, with every application of theirs (`deleteApplications`) and those applications' files. */
  deleteChildren: string[];
  deleteApplications: string[];
  /** The account deleted with its last child; null: kept (or none). */
  deleteAccount: string | null;
};

/** Whether the application waits for this link and may be withdrawn (spec 3.2 `withdraw`). */
export function awaitsLink(a: Pick<ExpiryApplication, 'participant' | 'submission' | 'status' | 'consentOutstanding'>, link: ExpiredLink): boolean {
  if (a.submission !== link.submission) return false;
  if (link.participant !== null && a.participant !== link.participant) return false;
  const waiting = link.kind === 'email' ? a.status === 'email_unconfirmed' : a.consentOutstanding && isAwaitingConfirmation(a.status);
  return waiting && applySystemTransition(a.status, 'withdraw').ok;
}

/** Withdrawn by an expiry and untouched since (every transition sets its own reason). */
export function withdrawnByExpiry(a: { status: string; decisionReason: string | null }): boolean {
  return a.status === 'withdrawn' && a.decisionReason === EXPIRED_REASON;
}

/**
 * What an expired link does (see above). `children`: the family's children (the account's, and any the
 * submission made or applied for); `applications`: every application of those children; `account`: the
 * submission's account (null when it has none any more).
 */
export function expiryPlan(input: {
  link: ExpiredLink;
  children: readonly ExpiryChild[];
  applications: readonly ExpiryApplication[];
  account: ExpiryAccount | null;
}): ExpiryPlan {
  const { link } = input;
  const expiring = input.applications.filter((a) => awaitsLink(a, link));
  const expiringIds = new Set(expiring.map((a) => a.uuid));
  const deleteChildren = link.kind !== 'email' ? [] : input.children.filter((c) => {
    if (!c.madeByUnconfirmedSubmission || c.referencedElsewhere) return false;
    const apps = input.applications.filter((a) => a.participant === c.uuid);
    // Only children whose fate this submission decides: it made them, or one of its expiring applications is theirs.
    if (!c.madeByThisSubmission && !apps.some((a) => expiringIds.has(a.uuid))) return false;
    return apps.every((a) => !a.paid && (expiringIds.has(a.uuid) || (withdrawnByExpiry(a) && !a.submissionConfirmed)));
  }).map((c) => c.uuid);
  const deleted = new Set(deleteChildren);
  const acc = input.account;
  const deleteAccount = link.kind === 'email' && acc !== null && acc.madeByUnconfirmedSubmission && !acc.addressConfirmed
    && !acc.referencedElsewhere && input.children.every((c) => deleted.has(c.uuid))
    ? acc.uuid : null;
  return {
    withdraw: expiring.filter((a) => !deleted.has(a.participant)).map((a) => a.uuid),
    deleteChildren,
    deleteApplications: input.applications.filter((a) => deleted.has(a.participant)).map((a) => a.uuid),
    deleteAccount,
  };
}

/**
 * A family's new wish for a child and offer that already has an application (D11 "a wish for an offer the child
 * already applied for: 409"): `reuse` when that application was withdrawn by an expiry (the family applies again),
 * `duplicate` otherwise.
 */
export function existingApplicationVerdict(existing: { status: string; decisionReason: string | null }): 'reuse' | 'duplicate' {
  return isAttendanceState(existing.status) && withdrawnByExpiry(existing) ? 'reuse' : 'duplicate';
}
