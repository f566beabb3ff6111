// D4: an edition's phases (`tasks`) and the state they give the edition at a moment.
//
// "Where a task of type show_offers, publish_lists or application_system exists, it governs online, the
// release of lists, and the procedure during its period, instead of the flag." Decided here:
//
// - A task's period runs from `begin` to `end`, both included. A missing `begin` means "since always", a
//   missing `end` "for ever"; a task without either is running at every moment.
// - `online`: if the edition has at least one `show_offers` task, it is online exactly while one of them is
//   running; before, between and after them it is offline, whatever the stored flag says. Without such a
//   task, the stored `online` flag applies.
// - `releaseParticipantLists`: the same with `publish_lists` tasks.
// - `procedure`: a procedure has no "off" value, so an `application_system` task governs beyond its period:
//   the running one (the latest begun if several overlap); else the one that ended last; else, before the
//   first one begins, the one that begins first. The governing task's `applicationSystem` is the procedure;
//   a task without one, or an edition without such tasks, falls back to the stored `procedure`. This keeps
//   a lot edition a lot edition after its application phase, while the places are drawn.

export const PROCEDURES = ['firstcome', 'lot'] as const;
export type Procedure = (typeof PROCEDURES)[number];

export const TASK_TYPES = [
  'holiday', 'host_editing_stage', 'show_offers', 'application_system', 'allocation', 'pay_days', 'publish_lists', 'custom',
] as const;
export type TaskType = (typeof TASK_TYPES)[number];

export type PhaseTask = {
  type: TaskType;
  begin: Date | null;
  end: Date | null;
  applicationSystem?: Procedure | null;
};

export type EditionState = { online: boolean; releaseParticipantLists: boolean; procedure: Procedure };

export type EditionWithTasks = EditionState & { tasks: readonly PhaseTask[] };

const time = (d: Date | null, open: number) => (d === null ? open : d.getTime());

/** Whether the task's period includes `now` (both ends included; a missing end is open). */
export function isTaskRunning(task: Pick<PhaseTask, 'begin' | 'end'>, now: Date): boolean {
  const t = now.getTime();
  return time(task.begin, -Infinity) <= t && t <= time(task.end, Infinity);
}

/** A window flag: governed by tasks of `type` where any exist, else the stored flag. */
function windowFlag(tasks: readonly PhaseTask[], type: TaskType, flag: boolean, now: Date): boolean {
  const governing = tasks.filter((t) => t.type === type);
  if (governing.length === 0) return flag;
  return governing.some((t) => isTaskRunning(t, now));
}

/** The `application_system` task that decides the procedure at `now`, if any (see the rule above). */
export function governingApplicationTask<T extends PhaseTask>(tasks: readonly T[], now: Date): T | null {
  const candidates = tasks.filter((t) => t.type === 'application_system');
  if (candidates.length === 0) return null;
  const t = now.getTime();
  // Ties go to the later task in the list.
  const pick = (list: T[], score: (x: T) => number, best: 'max' | 'min'): T | null =>
    list.reduce<T | null>((acc, x) => {
      if (acc === null) return x;
      const a = score(acc);
      const b = score(x);
      return (best === 'max' ? b >= a : b <= a) ? x : acc;
    }, null);
  const running = candidates.filter((x) => isTaskRunning(x, now));
  if (running.length > 0) return pick(running, (x) => time(x.begin, -Infinity), 'max');
  const ended = candidates.filter((x) => time(x.end, Infinity) < t);
  if (ended.length > 0) return pick(ended, (x) => time(x.end, Infinity), 'max');
  return pick(candidates, (x) => time(x.begin, -Infinity), 'min');
}

/** The edition's effective `online`, `releaseParticipantLists` and `procedure` at `now` (D4). */
export function effectiveEditionState(edition: EditionWithTasks, now: Date): EditionState {
  const { tasks } = edition;
  return {
    online: windowFlag(tasks, 'show_offers', edition.online, now),
    releaseParticipantLists: windowFlag(tasks, 'publish_lists', edition.releaseParticipantLists, now),
    procedure: governingApplicationTask(tasks, now)?.applicationSystem ?? edition.procedure,
  };
}

// ---- maxApplications (D4; issue 13) ----------------------------------------------------------------------
//
// An `application_system` task's `maxApplications` is the most applications one participant (child) may have
// in the edition while that phase runs: a new application (or a withdrawn one applied for again) beyond it
// is refused. Counted: the child's applications in the edition that are not withdrawn, in any offer.
// Only the running phase's limit applies (the governing one if several run: the latest begun); outside every
// application phase, and with `maxApplications` null, there is no limit. 0 allows none.

/** The limit in force at `now`, or null. */
export function applicationLimit(tasks: readonly (PhaseTask & { maxApplications?: number | null })[], now: Date): number | null {
  const running = tasks.filter((t) => t.type === 'application_system' && isTaskRunning(t, now));
  const governing = governingApplicationTask(running, now);
  return governing?.maxApplications ?? null;
}

/** Whether one more application, next to `counted` that count, goes beyond `limit`. */
export function exceedsApplicationLimit(limit: number | null, counted: number): boolean {
  return limit !== null && counted >= limit;
}

/** The states that do not count against `maxApplications`. */
export const NOT_COUNTED_FOR_LIMIT = ['withdrawn'] as const;
