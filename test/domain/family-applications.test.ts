import { describe, expect, it } from 'vitest';
import {
  ageWithinLimits, answersFit, beforeDeadline, birthDateProblem, editionOnline, insideApplicationPhase, offerVisible,
  onlineApplication, requiresApplication, sameChild, wishProblems, withinApplicationLimit, type UploadState, type WishOffer,
} from '../../src/domain/family-applications.js';
import type { ApplicationQuestion } from '../../src/domain/answers.js';
import type { PhaseTask } from '../../src/domain/edition-phases.js';

// D11, issue 21 item 3: every rule of a family's own wish, one table each. A rule answers null (passed) or the
// field, message and rule code of its violation.

const at = (s: string) => new Date(s);
const NOW = at('2027-05-10T12:00:00+02:00');

describe('offerVisible: published, listed publicly, not cancelled', () => {
  it.each([
    [true, true, false, null],
    [false, true, false, 'notOpen'],
    [true, false, false, 'notOpen'], // private link
    [true, true, true, 'notOpen'], // cancelled
  ] as const)('published %s, public %s, cancelled %s -> %s', (published, publicListing, cancelled, rule) => {
    expect(offerVisible({ published, publicListing, cancelled })?.rule ?? null).toBe(rule);
  });
});

describe('editionOnline, requiresApplication, onlineApplication', () => {
  it.each([[true, null], [false, 'notOpen']] as const)('edition online %s -> %s', (v, rule) => {
    expect(editionOnline({ editionOnline: v })?.rule ?? null).toBe(rule);
  });
  it.each([[true, null], [false, 'notOpen']] as const)('requiresApplication %s -> %s', (v, rule) => {
    expect(requiresApplication({ requiresApplication: v })?.rule ?? null).toBe(rule);
  });
  it.each([[true, null], [false, 'notOpen']] as const)('onlineApplication %s -> %s', (v, rule) => {
    expect(onlineApplication({ onlineApplication: v })?.rule ?? null).toBe(rule);
  });
});

describe('beforeDeadline: the deadline itself still counts', () => {
  it.each([
    [null, null],
    ['2027-05-10T12:00:00+02:00', null],
    ['2027-05-10T12:00:01+02:00', null],
    ['2027-05-10T11:59:59+02:00', 'deadlinePassed'],
  ] as const)('deadline %s -> %s', (deadline, rule) => {
    expect(beforeDeadline({ applicationDeadline: deadline ? at(deadline) : null }, NOW)?.rule ?? null).toBe(rule);
  });
});

const phase = (begin: string | null, end: string | null, maxApplications: number | null = null): PhaseTask & { maxApplications: number | null } => ({
  type: 'application_system', begin: begin ? at(begin) : null, end: end ? at(end) : null, applicationSystem: 'firstcome', maxApplications,
});

describe('insideApplicationPhase: where the edition has application phases, one must run', () => {
  it.each([
    ['no phases', [] as PhaseTask[], null],
    ['other tasks only', [{ type: 'holiday', begin: at('2027-07-01T00:00:00+02:00'), end: null }] as PhaseTask[], null],
    ['running', [phase('2027-05-01T00:00:00+02:00', '2027-05-31T00:00:00+02:00')], null],
    ['not yet', [phase('2027-06-01T00:00:00+02:00', '2027-06-30T00:00:00+02:00')], 'outsidePhase'],
    ['over', [phase('2027-04-01T00:00:00+02:00', '2027-04-30T00:00:00+02:00')], 'outsidePhase'],
    ['one of two runs', [phase('2027-04-01T00:00:00+02:00', '2027-04-30T00:00:00+02:00'), phase('2027-05-01T00:00:00+02:00', null)], null],
  ] as const)('%s -> %s', (_, tasks, rule) => {
    expect(insideApplicationPhase(tasks, NOW)?.rule ?? null).toBe(rule);
  });
});

describe('withinApplicationLimit: the running phase\'s maxApplications per child', () => {
  it.each([
    ['no limit', null, 50, null],
    ['below', 3, 2, null],
    ['at the limit', 3, 3, 'applicationLimit'],
    ['zero allows none', 0, 0, 'applicationLimit'],
  ] as const)('%s (max %s, counted %s) -> %s', (_, max, counted, rule) => {
    expect(withinApplicationLimit([phase('2027-05-01T00:00:00+02:00', null, max)], counted, NOW)?.rule ?? null).toBe(rule);
  });
  it('a phase that does not run limits nothing', () => {
    expect(withinApplicationLimit([phase('2027-06-01T00:00:00+02:00', null, 0)], 5, NOW)).toBeNull();
  });
});

describe('ageWithinLimits: age at the offer\'s first date', () => {
  const first = at('2027-07-10T09:00:00+02:00');
  it.each([
    ['2021-07-10', 6, 12, null], // sixth birthday on the first day
    ['2021-07-11', 6, 12, 'ageLimit'], // one day too young
    ['2014-07-11', 6, 12, null], // still 12
    ['2014-07-10', 6, 12, 'ageLimit'], // 13 on the day
    ['2026-01-01', null, null, null], // no limits
    ['2028-01-01', null, 3, 'ageLimit'], // not born yet
  ] as const)('born %s, %s..%s -> %s', (dob, minAge, maxAge, rule) => {
    expect(ageWithinLimits(dob, { minAge, maxAge, firstDate: first })?.rule ?? null).toBe(rule);
  });
  it('without a first date the age is not held against the child', () => {
    expect(ageWithinLimits('2026-01-01', { minAge: 6, maxAge: 12, firstDate: null })).toBeNull();
  });
  it('names the age and the limits', () => {
    expect(ageWithinLimits('2021-07-11', { minAge: 6, maxAge: 12, firstDate: first })?.message).toBe('The child is 5 at the offer\'s first date; the offer is for ages 6–12.');
  });
});

const Q: Record<string, ApplicationQuestion> = {
  swim: { uuid: '11111111-1111-4111-8111-111111111111', label: 'Kann schwimmen', type: 'yn', required: true },
  age: { uuid: '22222222-2222-4222-8222-222222222222', label: 'Schuhgröße', type: 'int', required: false },
  note: { uuid: '33333333-3333-4333-8333-333333333333', label: 'Allergien', type: 'txt', required: true },
  pass: { uuid: '44444444-4444-4444-8444-444444444444', label: 'Impfpass', type: 'file', required: true },
};
const FILE = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const UUID = /^[0-9a-f-]{36}$/;
const answers = (a: Record<string, string | boolean | number>, opts: { uploads?: Map<string, UploadState>; taken?: Set<string>; questions?: ApplicationQuestion[] } = {}) => answersFit({
  questions: opts.questions ?? Object.values(Q), answers: a, questionOf: (k) => (UUID.test(k) ? k : null), fileOf: (v) => (UUID.test(v) ? v : null),
  uploads: opts.uploads ?? new Map([[FILE, { token: 'tok', used: false }]]), token: 'tok', taken: opts.taken ?? new Set(),
}).map((p) => `${p.field} ${p.rule}`);
const complete = { [Q.swim.uuid]: true, [Q.note.uuid]: 'keine', [Q.pass.uuid]: FILE };

describe('answersFit: every required question answered, each of its type, files of this token and unused', () => {
  it.each([
    ['complete', complete, []],
    ['an optional one too', { ...complete, [Q.age.uuid]: 34 }, []],
    ['a required yn missing', { [Q.note.uuid]: 'x', [Q.pass.uuid]: FILE }, [`answers.${Q.swim.uuid} required`]],
    ['a required text blank', { ...complete, [Q.note.uuid]: '  ' }, [`answers.${Q.note.uuid} required`]],
    ['yn as a string', { ...complete, [Q.swim.uuid]: 'ja' }, [`answers.${Q.swim.uuid} type`, `answers.${Q.swim.uuid} required`]],
    ['int as a fraction', { ...complete, [Q.age.uuid]: 3.5 }, [`answers.${Q.age.uuid} type`]],
    ['txt as a number', { ...complete, [Q.note.uuid]: 5 }, [`answers.${Q.note.uuid} type`, `answers.${Q.note.uuid} required`]],
    ['txt too long', { ...complete, [Q.note.uuid]: 'x'.repeat(10_001) }, [`answers.${Q.note.uuid} type`, `answers.${Q.note.uuid} required`]],
    ['file as no identifier', { ...complete, [Q.pass.uuid]: 'impfpass.pdf' }, [`answers.${Q.pass.uuid} type`, `answers.${Q.pass.uuid} required`]],
    ['an unknown question', { ...complete, 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb': 1 }, ['answers.bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb choice']],
    ['a key that is no identifier', { ...complete, swim: true }, ['answers.swim choice']],
  ] as const)('%s', (_, a, expected) => {
    expect(answers(a as Record<string, string | boolean | number>)).toEqual(expected);
  });

  it.each([
    ['unknown upload', new Map<string, UploadState>(), new Set<string>()],
    ['another token\'s upload', new Map([[FILE, { token: 'other', used: false }]]), new Set<string>()],
    ['an upload used by an application', new Map([[FILE, { token: 'tok', used: true }]]), new Set<string>()],
    ['an upload another answer of the request names', new Map([[FILE, { token: 'tok', used: false }]]), new Set([FILE])],
  ] as const)('a file answer naming %s is refused', (_, uploads, taken) => {
    expect(answers(complete, { uploads: uploads as Map<string, UploadState>, taken: taken as Set<string> }))
      .toEqual([`answers.${Q.pass.uuid} fileUnavailable`, `answers.${Q.pass.uuid} required`]);
  });

  it('an offer without questions takes no answers and needs none', () => {
    expect(answers({}, { questions: [] })).toEqual([]);
    expect(answers({ [Q.swim.uuid]: true }, { questions: [] })).toEqual([`answers.${Q.swim.uuid} choice`]);
  });
});

describe('birthDateProblem and sameChild', () => {
  it.each([
    ['2020-01-01', null],
    ['2027-05-10', null], // born today
    ['2027-05-11', 'The date of birth lies in the future.'],
    ['1900-01-01', 'The date of birth is more than 120 years ago.'],
  ] as const)('%s -> %s', (dob, expected) => {
    expect(birthDateProblem(dob, '2027-05-10')).toBe(expected);
  });
  it.each([
    ['Emma', '2019-03-01', 'Emma', '2019-03-01', true],
    [' emma ', '2019-03-01', 'EMMA', '2019-03-01', true],
    ['Emma', '2019-03-01', 'Emma', '2019-03-02', false],
    ['Emma', '2019-03-01', 'Emil', '2019-03-01', false],
    ['Emma', '2019-03-01', null, '2019-03-01', false], // a pseudonymised child has no name
  ] as const)('%s %s vs %s %s -> %s', (fa, da, fb, db, same) => {
    expect(sameChild({ firstname: fa, dateOfBirth: da }, { firstname: fb, dateOfBirth: db })).toBe(same);
  });
});

describe('wishProblems: the offer\'s gate first, then limit, age and answers', () => {
  const offer: WishOffer = {
    published: true, publicListing: true, cancelled: false, editionOnline: true, requiresApplication: true, onlineApplication: true,
    applicationDeadline: null, minAge: 6, maxAge: 12, firstDate: at('2027-07-10T09:00:00+02:00'), questions: [Q.swim], tasks: [],
  };
  const wish = (o: Partial<WishOffer>, dob = '2018-01-01', a: Record<string, boolean> = { [Q.swim.uuid]: true }, counted = 0) => wishProblems({
    offer: { ...offer, ...o }, dateOfBirth: dob, counted, now: NOW,
    answers: { questions: o.questions ?? offer.questions, answers: a, questionOf: (k) => k, fileOf: () => null, uploads: new Map(), token: 't', taken: new Set() },
  }).map((p) => p.rule);

  it('a fitting wish has no problem', () => expect(wish({})).toEqual([]));
  it('a closed offer answers only that', () => expect(wish({ onlineApplication: false }, '2025-01-01', {})).toEqual(['notOpen']));
  it('a past deadline', () => expect(wish({ applicationDeadline: at('2027-05-01T00:00:00+02:00') })).toEqual(['deadlinePassed']));
  it('outside the phase', () => expect(wish({ tasks: [phase('2027-06-01T00:00:00+02:00', null)] })).toEqual(['outsidePhase']));
  it('age, limit and answers together', () => {
    expect(wish({ tasks: [phase(null, null, 1)] }, '2025-01-01', {}, 1)).toEqual(['applicationLimit', 'ageLimit', 'required']);
  });
});
