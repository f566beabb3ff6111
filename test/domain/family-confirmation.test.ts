import { describe, expect, it } from 'vitest';
import {
  afterConfirmation, CONFIRMATION_HOURS, confirmationExpiry, confirmationLink, isAwaitingConfirmation, needsConsent, waitingState,
} from '../../src/domain/family-confirmation.js';

// D11, issue 21 items 4 and 5: what a family's application waits for, and where it goes when a confirmation
// arrives. Both may be outstanding at once; it leaves the system states only when neither is.

describe('waitingState', () => {
  it.each([
    [true, true, 'email_unconfirmed'],
    [true, false, 'email_unconfirmed'],
    [false, true, 'consents_outstanding'],
    [false, false, null],
  ] as const)('email %s, consent %s -> %s', (email, consent, state) => {
    expect(waitingState({ email, consent })).toBe(state);
  });
});

describe('afterConfirmation', () => {
  it.each([
    // status, consentOutstanding, what arrived, result
    ['email_unconfirmed', false, 'email', { next: 'decide', consentOutstanding: false }],
    ['email_unconfirmed', true, 'email', { next: 'wait', status: 'consents_outstanding', consentOutstanding: true }],
    ['email_unconfirmed', true, 'consent', { next: 'wait', status: 'email_unconfirmed', consentOutstanding: false }],
    ['consents_outstanding', true, 'consent', { next: 'decide', consentOutstanding: false }],
    ['email_unconfirmed', false, 'consent', { next: 'same' }], // nothing to consent to
    ['consents_outstanding', true, 'email', { next: 'same' }], // the address was confirmed before
    ['withdrawn', true, 'consent', { next: 'same' }], // withdrawn meanwhile (expiry, the team)
    ['confirmed', false, 'email', { next: 'same' }],
  ] as const)('%s (consentOutstanding %s) + %s -> %j', (status, consentOutstanding, what, result) => {
    expect(afterConfirmation({ status, consentOutstanding }, what)).toEqual(result);
  });

  it('either order of the two confirmations ends in the procedure deciding', () => {
    const start = { status: 'email_unconfirmed' as const, consentOutstanding: true };
    const a = afterConfirmation(start, 'email');
    expect(a.next === 'wait' && afterConfirmation({ status: a.status, consentOutstanding: a.consentOutstanding }, 'consent')).toEqual({ next: 'decide', consentOutstanding: false });
    const b = afterConfirmation(start, 'consent');
    expect(b.next === 'wait' && afterConfirmation({ status: b.status, consentOutstanding: b.consentOutstanding }, 'email')).toEqual({ next: 'decide', consentOutstanding: false });
  });

  it('only the two waits are system states', () => {
    expect(isAwaitingConfirmation('email_unconfirmed')).toBe(true);
    expect(isAwaitingConfirmation('consents_outstanding')).toBe(true);
    expect(isAwaitingConfirmation('waiting')).toBe(false);
  });
});

describe('needsConsent: a guardian address other than the account\'s', () => {
  it.each([
    [undefined, false], [null, false], ['', false],
    ['mama@example.org', false], [' MAMA@example.org ', false], ['papa@example.org', true],
  ] as const)('%s -> %s', (guardian, needed) => {
    expect(needsConsent(guardian, 'mama@example.org')).toBe(needed);
  });
});

describe('links and expiry', () => {
  it('expire 72 hours after sending', () => {
    expect(CONFIRMATION_HOURS).toBe(72);
    expect(confirmationExpiry(new Date('2027-05-01T10:00:00Z')).toISOString()).toBe('2027-05-04T10:00:00.000Z');
  });
  it.each([
    [undefined, 'bestaetigen', 'https://ferien.example/anmeldung/bestaetigen/abc'],
    [undefined, 'einwilligen', 'https://ferien.example/anmeldung/einwilligen/abc'],
    ['https://www.example.org/ok?t={token}&again={token}', 'bestaetigen', 'https://www.example.org/ok?t=abc&again=abc'],
  ] as const)('template %s (%s) -> %s', (template, path, link) => {
    expect(confirmationLink(template, 'ferien.example', path, 'abc')).toBe(link);
  });
});
