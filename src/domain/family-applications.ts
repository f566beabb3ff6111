// The rules of a family's own application (D11; issue 21 item 3). A family applies on the municipality's
// website; the website hands the application to the service. Each wish (a child for an offer) must pass every
// rule below, or the whole request is refused (all or nothing). Each rule is a function of what it needs and
// answers null (passed) or a problem: the field below the wish it concerns, a message and the rule's code.
// Admins keep the freedom of D10: none of these apply to POST /attendances.

import { ageAtFirstDate, ageLimitsText, ageVerdict, type AgeLimits } from './age.js';
import { ANSWER_TYPE_NAMES, answerFits, isAnswered, type AnswerValue, type ApplicationQuestion } from './answers.js';
import { applicationLimit, exceedsApplicationLimit, isTaskRunning, type PhaseTask } from './edition-phases.js';
import type { RuleCode } from './errors.js';

/** A problem of one wish: `field` below `participants[i].wishes[j]` (`offer`, `answers.<question>`). */
export type WishProblem = { field: string; message: string; rule: RuleCode };

const problem = (field: string, message: string, rule: RuleCode): WishProblem => ({ field, message, rule });

/** The most children in one request, and the most wishes of one child (issue 21: "thousands of wishes"). */
export const MAX_CHILDREN = 12;
export const MAX_WISHES_PER_CHILD = 20;

// ---- the offer and its edition ------------------------------------------------------------------------------

/** Visible to anonymous callers (spec 4.2): published, listed publicly, not called off. */
export function offerVisible(o: { published: boolean; publicListing: boolean; cancelled: boolean }): WishProblem | null {
  if (!o.published || !o.publicListing) return problem('offer', 'This offer is not published for families.', 'notOpen');
  if (o.cancelled) return problem('offer', 'This offer was cancelled.', 'notOpen');
  return null;
}

/** The offer's edition is online now (D4: its `show_offers` phases, else its flag). */
export function editionOnline(o: { editionOnline: boolean }): WishProblem | null {
  return o.editionOnline ? null : problem('offer', 'The offer\'s edition is not online.', 'notOpen');
}

/** Spec 2.3 `requiresApplication`: an offer without application is simply attended. */
export function requiresApplication(o: { requiresApplication: boolean }): WishProblem | null {
  return o.requiresApplication ? null : problem('offer', 'This offer needs no application: come along without one.', 'notOpen');
}

/** Spec 2.3 `onlineApplication`: families apply online only where the offer allows it. */
export function onlineApplication(o: { onlineApplication: boolean }): WishProblem | null {
  return o.onlineApplication ? null : problem('offer', 'This offer takes no online applications.', 'notOpen');
}

/** Spec 2.3 `applicationDeadline`: before it (a deadline is the last moment that counts). */
export function beforeDeadline(o: { applicationDeadline: Date | null }, now: Date): WishProblem | null {
  if (o.applicationDeadline === null || now.getTime() <= o.applicationDeadline.getTime()) return null;
  return problem('offer', `The application deadline of this offer has passed (${o.applicationDeadline.toISOString()}).`, 'deadlinePassed');
}

/**
 * D4: where the edition has `application_system` phases, families apply only while one of them runs;
 * an edition without such phases takes applications whenever it is online.
 */
export function insideApplicationPhase(tasks: readonly PhaseTask[], now: Date): WishProblem | null {
  const phases = tasks.filter((t) => t.type === 'application_system');
  if (phases.length === 0 || phases.some((t) => isTaskRunning(t, now))) return null;
  return problem('offer', 'The edition\'s application phase is not running.', 'outsidePhase');
}

/**
 * D4 `maxApplications` of the running phase: `counted` is the child's applications in the edition that count
 * (not withdrawn) plus this request's earlier wishes of the child in the same edition.
 */
export function withinApplicationLimit(tasks: readonly (PhaseTask & { maxApplications?: number | null })[], counted: number, now: Date): WishProblem | null {
  const limit = applicationLimit(tasks, now);
  if (!exceedsApplicationLimit(limit, counted)) return null;
  return problem('offer', `The running application phase allows at most ${limit} application${limit === 1 ? '' : 's'} per child in this edition; this would be one more.`, 'applicationLimit');
}

/**
 * Age at the offer's first date (the one rule of domain/age.ts) within `minAge`..`maxAge`. Without a first
 * date (no dates, no holidays) the age cannot be known and is not held against the child, as in the lottery.
 */
export function ageWithinLimits(dateOfBirth: string, offer: AgeLimits & { firstDate: Date | null }): WishProblem | null {
  if (offer.minAge === null && offer.maxAge === null) return null;
  const age = ageAtFirstDate(dateOfBirth, offer.firstDate);
  if (age === null) return null;
  const verdict = ageVerdict(age, offer);
  if (verdict === 'fits') return null;
  const when = age < 0 ? 'is not born yet at the offer\'s first date' : `is ${age} at the offer's first date`;
  return problem('offer', `The child ${when}; the offer is for ages ${ageLimitsText(offer)}.`, 'ageLimit');
}

// ---- answers and files ------------------------------------------------------------------------------------

/** An upload as the rule needs it: whose token uploaded it and whether an application uses it already. */
export type UploadState = { token: string | null; used: boolean };

/**
 * The wish's answers: every key a question of the offer (`choice`), every value of its question's type
 * (`type`), every `required` question answered (`required`); a `file` answer names an upload of the same
 * token (`uploads` by uuid; absent: unknown) that no application uses yet and no other answer of this request
 * names (`taken`, the file uuids named before).
 */
export function answersFit(input: {
  questions: readonly ApplicationQuestion[];
  answers: Readonly<Record<string, AnswerValue>>;
  /** The question uuid of each key, or null when the key is no identifier. */
  questionOf: (key: string) => string | null;
  /** The file uuid a `file` answer names, or null when it is no identifier. */
  fileOf: (value: string) => string | null;
  uploads: ReadonlyMap<string, UploadState>;
  token: string;
  taken: ReadonlySet<string>;
}): WishProblem[] {
  const problems: WishProblem[] = [];
  const byId = new Map(input.questions.map((q) => [q.uuid, q]));
  const answered = new Set<string>();
  for (const [key, value] of Object.entries(input.answers)) {
    const field = `answers.${key.slice(0, 100)}`;
    const id = input.questionOf(key);
    const q = id ? byId.get(id) : undefined;
    if (!q) {
      problems.push(problem(field, 'This offer has no application question with this identifier.', 'choice'));
      continue;
    }
    if (!answerFits(q.type, value, (v) => input.fileOf(v) !== null)) {
      problems.push(problem(field, `The answer to "${q.label}" (type ${q.type}) must be ${ANSWER_TYPE_NAMES[q.type]}.`, 'type'));
      continue;
    }
    if (q.type === 'file') {
      const file = input.fileOf(value as string)!;
      const upload = input.uploads.get(file);
      if (!upload || upload.token !== input.token) {
        problems.push(problem(field, 'No file with this identifier was uploaded with this token (POST /files).', 'fileUnavailable'));
        continue;
      }
      if (upload.used || input.taken.has(file)) {
        problems.push(problem(field, 'This file is already the answer of an application; upload it again for another one.', 'fileUnavailable'));
        continue;
      }
    }
    if (isAnswered(value)) answered.add(q.uuid);
  }
  for (const q of input.questions) {
    if (q.required && !answered.has(q.uuid)) {
      problems.push(problem(`answers.${q.uuid}`, `"${q.label}" is a required question of this offer; answer it (${ANSWER_TYPE_NAMES[q.type]}).`, 'required'));
    }
  }
  return problems;
}

// ---- the child ---------------------------------------------------------------------------------------------

/** A birth date (YYYY-MM-DD) may not lie after `today` (YYYY-MM-DD, Berlin) nor more than 120 years back. */
export function birthDateProblem(dateOfBirth: string, today: string): string | null {
  if (dateOfBirth > today) return 'The date of birth lies in the future.';
  if (Number(today.slice(0, 4)) - Number(dateOfBirth.slice(0, 4)) > 120) return 'The date of birth is more than 120 years ago.';
  return null;
}

/** D11: a child is the same child as one of the family's when first name (ignoring case and spaces) and birth date match. */
export function sameChild(a: { firstname: string; dateOfBirth: string }, b: { firstname: string | null; dateOfBirth: string | null }): boolean {
  return b.firstname !== null && b.dateOfBirth === a.dateOfBirth && normalName(a.firstname) === normalName(b.firstname);
}

const normalName = (s: string) => s.trim().replace(/\s+/g, ' ').toLocaleLowerCase('de-DE');

// ---- one wish ----------------------------------------------------------------------------------------------

/** The offer as the rules of a wish read it. */
export type WishOffer = AgeLimits & {
  published: boolean; publicListing: boolean; cancelled: boolean; editionOnline: boolean;
  requiresApplication: boolean; onlineApplication: boolean; applicationDeadline: Date | null;
  /** The offer's first date (else its edition's first holiday day): the day the age is taken on. */
  firstDate: Date | null;
  questions: readonly ApplicationQuestion[];
  /** The edition's application phases (D4). */
  tasks: readonly (PhaseTask & { maxApplications?: number | null })[];
};

/**
 * Every rule of one wish, in the order a family would want to hear them: the offer's own rules first (when one
 * of them refuses, nothing else matters), then the limit, the age and the answers.
 */
export function wishProblems(input: {
  offer: WishOffer; dateOfBirth: string; counted: number; now: Date;
  answers: Parameters<typeof answersFit>[0];
}): WishProblem[] {
  const { offer, now } = input;
  const gate = offerVisible(offer) ?? editionOnline(offer) ?? requiresApplication(offer) ?? onlineApplication(offer)
    ?? beforeDeadline(offer, now) ?? insideApplicationPhase(offer.tasks, now);
  if (gate) return [gate];
  const problems = [withinApplicationLimit(offer.tasks, input.counted, now), ageWithinLimits(input.dateOfBirth, offer)]
    .filter((p): p is WishProblem => p !== null);
  return [...problems, ...answersFit(input.answers)];
}
