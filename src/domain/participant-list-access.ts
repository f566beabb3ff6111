// Who may read an offer's participant list, whose names organisers see, and when a first-come-first-served
// phase is running: spec 4.3 "Access rules", 5.5; D2 (retentionWeeks), D4 (phases), D10 "Applications".

import type { AttendanceState } from './attendance-states.js';
import { governingApplicationTask, isTaskRunning, type EditionWithTasks } from './edition-phases.js';

export type ListAccess = 'ok' | 'not_own' | 'not_released' | 'retention_over';

const WEEK_MS = 7 * 86_400_000;

/**
 * Spec 4.3: organiser users read the participant list of their own offers once the edition has released the
 * lists, and until the data retention period (D2 `retentionWeeks`) after the offer has ended. An offer without
 * dates has not ended. Admins are not subject to this rule.
 */
export function organiserListAccess(input: {
  ownOffer: boolean;
  listsReleased: boolean;
  /** End of the offer's last occurrence; null when it has no dates. */
  offerEnd: Date | null;
  retentionWeeks: number;
  now: Date;
}): ListAccess {
  if (!input.ownOffer) return 'not_own';
  if (!input.listsReleased) return 'not_released';
  if (input.offerEnd && input.now.getTime() > input.offerEnd.getTime() + input.retentionWeeks * WEEK_MS) return 'retention_over';
  return 'ok';
}

/** The `not_permitted` detail for a refused list (spec 7: more specific than a generic phrase). */
export function listAccessDetail(access: Exclude<ListAccess, 'ok'>): string {
  switch (access) {
    case 'not_own':
      return 'Organisers may only see the participant lists of their own offers.';
    case 'not_released':
      return 'The edition has not released its participant lists to organisers yet.';
    case 'retention_over':
      return 'The data retention period after this offer has ended; its participant list is no longer available.';
  }
}

/** States whose participants an organiser sees by name: those who have, had or may still get a place. */
const NAMED_STATES: readonly AttendanceState[] = ['confirmed', 'waitlisted', 'participated', 'noshow'];

/**
 * Spec 5.5, D6 (chosen): on a released list an organiser sees the names (participant and account) of
 * applications that hold, held or may still get a place, and only once the decision is final: a held-back
 * decision has not been told to the family yet. Every other application shows its references without names
 * and `piiMasked: true`.
 */
export function organiserSeesNames(application: { status: AttendanceState; heldBack: boolean }): boolean {
  return NAMED_STATES.includes(application.status) && !application.heldBack;
}

/**
 * D10 "During a running first-come-first-served phase": the edition's application procedure is first come
 * first served and its application phase is running now. With `application_system` tasks that is the
 * governing task while it runs (its `applicationSystem`, else the stored procedure); without such tasks the
 * stored procedure decides, with no time limit.
 */
export function firstComePhaseRunning(edition: EditionWithTasks, now: Date): boolean {
  const hasTasks = edition.tasks.some((t) => t.type === 'application_system');
  if (!hasTasks) return edition.procedure === 'firstcome';
  const task = governingApplicationTask(edition.tasks, now);
  if (!task || !isTaskRunning(task, now)) return false;
  return (task.applicationSystem ?? edition.procedure) === 'firstcome';
}
