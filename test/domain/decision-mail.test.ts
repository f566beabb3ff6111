import { describe, it, expect } from 'vitest';
import { formatEuro, type ReleasedDecision } from '../../src/domain/decision-mail.js';
import { composeDecisionMails, decisionLine } from '../../src/platform/mail/templates/de.js';

// The commit e-mail (D7, D10 "Lot and commit"): one per family, children by first name, a decision per offer.
let n = 0;
const decision = (over: Partial<ReleasedDecision>): ReleasedDecision => ({
  attendanceId: `a${++n}`, familyId: 'f1', recipient: 'familie@example.org', participantId: 'p1', firstname: 'Kim',
  offerName: 'Kanu', status: 'confirmed', fee: 0, ...over,
});

describe('formatEuro', () => {
  it.each([[0, '0,00 €'], [5, '0,05 €'], [1250, '12,50 €'], [123456, '1.234,56 €'], [-700, '-7,00 €']])('%s -> %s', (cents, text) => {
    expect(formatEuro(cents)).toBe(text);
  });
});

describe('decisionLine', () => {
  it('names the offer and the decision; a confirmed place with a fee names the fee', () => {
    expect(decisionLine({ offerName: 'Kanu', status: 'confirmed', fee: 1250 })).toBe('- „Kanu“: Platz erhalten (Teilnahmebeitrag 12,50 €)');
    expect(decisionLine({ offerName: 'Kanu', status: 'confirmed', fee: null })).toBe('- „Kanu“: Platz erhalten');
    expect(decisionLine({ offerName: 'Kanu', status: 'waitlisted', fee: 1250 })).toBe('- „Kanu“: auf der Warteliste – wird ein Platz frei, melden wir uns');
    expect(decisionLine({ offerName: 'Kanu', status: 'unfulfilled', fee: 1250 })).toBe('- „Kanu“: leider kein Platz');
    expect(decisionLine({ offerName: 'Kanu', status: 'rejected', fee: 0 })).toBe('- „Kanu“: Absage');
  });
});

describe('composeDecisionMails', () => {
  it('writes one mail per family, children in German order by first name, offers by name', () => {
    const mails = composeDecisionMails('Sommer 2027', [
      decision({ participantId: 'p2', firstname: 'Özlem', offerName: 'Töpfern', status: 'waitlisted' }),
      decision({ participantId: 'p1', firstname: 'Kim', offerName: 'Zelten', status: 'unfulfilled' }),
      decision({ participantId: 'p1', firstname: 'Kim', offerName: 'Angeln', status: 'confirmed', fee: 800 }),
      decision({ familyId: 'f2', recipient: 'ole@example.org', participantId: 'p3', firstname: 'Ole', offerName: 'Kanu', status: 'confirmed' }),
    ]);
    expect(mails.map((m) => [m.familyId, m.recipient])).toEqual([['f1', 'familie@example.org'], ['f2', 'ole@example.org']]);
    expect(mails[0].subject).toBe('Ergebnis der Platzvergabe: Sommer 2027');
    expect(mails[0].body).toBe([
      'Guten Tag,',
      '',
      'für das Ferienprogramm „Sommer 2027“ stehen die Entscheidungen über Ihre Anmeldungen fest:',
      '',
      'Kim:',
      '- „Angeln“: Platz erhalten (Teilnahmebeitrag 8,00 €)',
      '- „Zelten“: leider kein Platz',
      '',
      'Özlem:',
      '- „Töpfern“: auf der Warteliste – wird ein Platz frei, melden wir uns',
      '',
      'Die Teilnahmebeiträge für die erhaltenen Plätze sind ab jetzt fällig.',
      '',
      'Ihr Ferienprogramm-Team',
      '',
    ].join('\n'));
    expect(mails[0].attendanceIds).toHaveLength(3);
    // No fee due: no note about fees.
    expect(mails[1].body).toBe([
      'Guten Tag,',
      '',
      'für das Ferienprogramm „Sommer 2027“ stehen die Entscheidungen über Ihre Anmeldungen fest:',
      '',
      'Ole:',
      '- „Kanu“: Platz erhalten',
      '',
      'Ihr Ferienprogramm-Team',
      '',
    ].join('\n'));
  });

  it('skips families without an address and names an unknown child "Ihr Kind"', () => {
    const mails = composeDecisionMails('E', [
      decision({ familyId: 'f9', recipient: null, participantId: 'p9' }),
      decision({ familyId: 'f3', recipient: 'x@example.org', participantId: 'p4', firstname: null }),
    ]);
    expect(mails).toHaveLength(1);
    expect(mails[0].body).toContain('Ihr Kind:\n- „Kanu“: Platz erhalten');
  });

  it('keeps two children of the same first name apart and is deterministic', () => {
    const input = [
      decision({ participantId: 'pB', firstname: 'Kim', offerName: 'B' }),
      decision({ participantId: 'pA', firstname: 'Kim', offerName: 'A' }),
    ];
    const mails = composeDecisionMails('E', input);
    expect(mails[0].body).toContain('Kim:\n- „A“: Platz erhalten\n\nKim:\n- „B“: Platz erhalten');
    expect(composeDecisionMails('E', [...input].reverse())).toEqual(mails);
  });

  it('gives nothing for nothing', () => {
    expect(composeDecisionMails('E', [])).toEqual([]);
  });
});
