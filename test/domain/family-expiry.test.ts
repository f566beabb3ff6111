import { describe, expect, it } from 'vitest';
import type { AttendanceState } from '../../src/domain/attendance-states.js';
import {
  awaitsLink, EXPIRED_REASON, existingApplicationVerdict, expiryPlan, withdrawnByExpiry,
  type ExpiredLink, type ExpiryAccount, type ExpiryApplication, type ExpiryChild,
} from '../../src/domain/family-expiry.js';

// D11, issue 21 item 4: an expired link withdraws the applications waiting for it; what the unconfirmed submission
// made (children, an account with nothing else) is deleted; a child that existed before keeps its application,
// withdrawn; the family may apply again for what expired, and only for that.

const S = 'sub-1';
const email: ExpiredLink = { kind: 'email', submission: S, participant: null };
const consent: ExpiredLink = { kind: 'consent', submission: S, participant: 'emma' };

const app = (uuid: string, participant: string, o: Partial<ExpiryApplication> = {}): ExpiryApplication => ({
  uuid, participant, submission: S, submissionConfirmed: false, status: 'email_unconfirmed', consentOutstanding: false, decisionReason: null, paid: false, ...o,
});
const child = (uuid: string, o: Partial<ExpiryChild> = {}): ExpiryChild => ({
  uuid, madeByThisSubmission: true, madeByUnconfirmedSubmission: true, referencedElsewhere: false, ...o,
});
const account = (o: Partial<ExpiryAccount> = {}): ExpiryAccount => ({
  uuid: 'acc', madeByUnconfirmedSubmission: true, addressConfirmed: false, referencedElsewhere: false, ...o,
});
const expired = (uuid: string, participant: string, o: Partial<ExpiryApplication> = {}) =>
  app(uuid, participant, { submission: 'sub-0', status: 'withdrawn', decisionReason: EXPIRED_REASON, ...o });
const existedBefore = { madeByThisSubmission: false, madeByUnconfirmedSubmission: false };

describe('awaitsLink', () => {
  it.each([
    // status, consentOutstanding, link, awaits
    ['email_unconfirmed', false, email, true],
    ['email_unconfirmed', true, email, true],
    ['consents_outstanding', true, email, false], // the address was confirmed
    ['consents_outstanding', true, consent, true],
    ['email_unconfirmed', true, consent, true], // both outstanding, the consent's link expired
    ['email_unconfirmed', false, consent, false],
    ['withdrawn', false, email, false], // the team withdrew it meanwhile
    ['confirmed', false, email, false],
    ['waiting', false, consent, false],
  ] as [AttendanceState, boolean, ExpiredLink, boolean][])('%s (consent outstanding %s), %o link -> %s', (status, consentOutstanding, link, awaits) => {
    expect(awaitsLink(app('a', 'emma', { status, consentOutstanding }), link)).toBe(awaits);
  });

  it('only the link\'s own submission, and for a consent link only its child', () => {
    expect(awaitsLink(app('a', 'emma', { submission: 'other' }), email)).toBe(false);
    expect(awaitsLink(app('a', 'emma', { submission: null }), email)).toBe(false);
    expect(awaitsLink(app('a', 'paul', { status: 'consents_outstanding', consentOutstanding: true }), consent)).toBe(false);
  });
});

describe('expiryPlan: an e-mail link', () => {
  it('a new child and a new account with nothing else: deleted with their applications', () => {
    const plan = expiryPlan({ link: email, children: [child('emma')], applications: [app('a1', 'emma'), app('a2', 'emma')], account: account() });
    expect(plan).toEqual({ withdraw: [], deleteChildren: ['emma'], deleteApplications: ['a1', 'a2'], deleteAccount: 'acc' });
  });

  it('a child that existed before (the team\'s, or a confirmed family\'s) keeps its application, withdrawn; the account stays', () => {
    const plan = expiryPlan({
      link: email, children: [child('emma', existedBefore), child('paul')],
      applications: [app('a1', 'emma'), app('a2', 'paul')], account: account({ madeByUnconfirmedSubmission: false }),
    });
    expect(plan).toEqual({ withdraw: ['a1'], deleteChildren: ['paul'], deleteApplications: ['a2'], deleteAccount: null });
  });

  it('a new child with another application (another submission, the team) is kept, its expired one withdrawn', () => {
    for (const other of [app('b', 'emma', { submission: 'sub-2' }), app('b', 'emma', { submission: null, status: 'confirmed' }),
      app('b', 'emma', { submission: 'sub-2', status: 'confirmed', submissionConfirmed: true }),
      // withdrawn by the team (its reason is not the expiry's), or by the expiry of a confirmed family's consent
      app('b', 'emma', { submission: null, status: 'withdrawn' }), expired('b', 'emma', { submissionConfirmed: true })]) {
      const plan = expiryPlan({ link: email, children: [child('emma')], applications: [app('a', 'emma'), other], account: account() });
      expect(plan, JSON.stringify(other)).toEqual({ withdraw: ['a'], deleteChildren: [], deleteApplications: [], deleteAccount: null });
    }
  });

  it('a new child named elsewhere (a debtor) or with a paid application is kept', () => {
    expect(expiryPlan({ link: email, children: [child('emma', { referencedElsewhere: true })], applications: [app('a', 'emma')], account: account() }))
      .toEqual({ withdraw: ['a'], deleteChildren: [], deleteApplications: [], deleteAccount: null });
    expect(expiryPlan({ link: email, children: [child('emma')], applications: [app('a', 'emma', { paid: true })], account: account() }))
      .toEqual({ withdraw: ['a'], deleteChildren: [], deleteApplications: [], deleteAccount: null });
  });

  it('a child an earlier unconfirmed submission made, kept then for this one\'s application, goes now with both', () => {
    const plan = expiryPlan({
      link: email, children: [child('emma', { madeByThisSubmission: false })],
      applications: [expired('old', 'emma'), app('a', 'emma')], account: account(),
    });
    expect(plan).toEqual({ withdraw: [], deleteChildren: ['emma'], deleteApplications: ['old', 'a'], deleteAccount: 'acc' });
  });

  it('a child of an earlier unconfirmed submission that this one does not concern is left to its own link', () => {
    const plan = expiryPlan({
      link: email, children: [child('emma'), child('paul', { madeByThisSubmission: false })],
      applications: [app('a', 'emma'), expired('old', 'paul')], account: account(),
    });
    expect(plan).toEqual({ withdraw: [], deleteChildren: ['emma'], deleteApplications: ['a'], deleteAccount: null });
  });

  it('the account stays while it has anything else: a child kept, a confirmed address, a debtor, or the team made it', () => {
    const cases: [string, Partial<ExpiryAccount>, ExpiryChild[]][] = [
      ['a child of the team', {}, [child('emma'), child('ben', existedBefore)]],
      ['a confirmed address', { addressConfirmed: true }, [child('emma')]],
      ['a debtor', { referencedElsewhere: true }, [child('emma')]],
      ['made by the team', { madeByUnconfirmedSubmission: false }, [child('emma')]],
    ];
    for (const [why, acc, children] of cases) {
      const plan = expiryPlan({ link: email, children, applications: [app('a', 'emma')], account: account(acc) });
      expect(plan.deleteChildren, why).toEqual(['emma']);
      expect(plan.deleteAccount, why).toBeNull();
    }
  });

  it('without an account (the team deleted it) the children still go', () => {
    expect(expiryPlan({ link: email, children: [child('emma')], applications: [app('a', 'emma')], account: null }))
      .toEqual({ withdraw: [], deleteChildren: ['emma'], deleteApplications: ['a'], deleteAccount: null });
  });

  it('applications no longer waiting (confirmed meanwhile by the team) are neither withdrawn nor deleted', () => {
    const plan = expiryPlan({ link: email, children: [child('emma')], applications: [app('a', 'emma', { status: 'confirmed', submission: S })], account: account() });
    expect(plan).toEqual({ withdraw: [], deleteChildren: [], deleteApplications: [], deleteAccount: null });
  });
});

describe('expiryPlan: a consent link', () => {
  it('withdraws the child\'s applications still waiting for the consent and deletes nothing (the address is confirmed)', () => {
    const plan = expiryPlan({
      link: consent, children: [child('emma', { madeByUnconfirmedSubmission: false }), child('paul', { madeByUnconfirmedSubmission: false })],
      applications: [
        app('a1', 'emma', { status: 'consents_outstanding', consentOutstanding: true, submissionConfirmed: true }),
        app('a2', 'emma', { status: 'confirmed', submissionConfirmed: true }),
        app('b', 'paul', { status: 'consents_outstanding', consentOutstanding: true, submissionConfirmed: true }),
      ],
      account: account({ addressConfirmed: true }),
    });
    expect(plan).toEqual({ withdraw: ['a1'], deleteChildren: [], deleteApplications: [], deleteAccount: null });
  });

  it('deletes nothing even for a child the submission made', () => {
    const plan = expiryPlan({ link: consent, children: [child('emma')], applications: [app('a', 'emma', { status: 'consents_outstanding', consentOutstanding: true })], account: account() });
    expect(plan).toEqual({ withdraw: ['a'], deleteChildren: [], deleteApplications: [], deleteAccount: null });
  });
});

describe('applying again', () => {
  it.each([
    ['withdrawn', EXPIRED_REASON, 'reuse'],
    ['withdrawn', null, 'duplicate'], // withdrawn by the team or the family
    ['withdrawn', 'Vom Team zurückgezogen', 'duplicate'],
    ['waiting', EXPIRED_REASON, 'duplicate'], // reset by the team since: its reason would be gone, but to be sure
    ['email_unconfirmed', 'Wartet auf die Bestätigung der E-Mail-Adresse der Familie', 'duplicate'],
    ['confirmed', null, 'duplicate'],
  ] as const)('%s with reason %s -> %s', (status, decisionReason, verdict) => {
    expect(existingApplicationVerdict({ status, decisionReason })).toBe(verdict);
    expect(withdrawnByExpiry({ status, decisionReason })).toBe(verdict === 'reuse');
  });
});
