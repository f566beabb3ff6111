// Application (attendance) state machine: spec 3.1 (states), 3.2 (transitions), D10 (await_*).

export const ATTENDANCE_STATES = [
  'waiting',
  'confirmed',
  'waitlisted',
  'rejected',
  'withdrawn',
  'unfulfilled',
  'participated',
  'noshow',
  'email_unconfirmed',
  'consents_outstanding',
] as const;
export type AttendanceState = (typeof ATTENDANCE_STATES)[number];

// Transitions a client may send (spec 4.3 "Transition"), in the order the `transitions` list shows them.
export const ATTENDANCE_TRANSITIONS = [
  'confirm',
  'waitlist',
  'reject',
  'withdraw',
  'reset',
  'unfulfill',
  'participated',
  'noshow',
] as const;
export type AttendanceTransition = (typeof ATTENDANCE_TRANSITIONS)[number];

// Applied by the system only; never accepted through the API (spec 3.2, D10: invalid input).
export const SYSTEM_TRANSITIONS = ['await_email', 'await_consents'] as const;
export type SystemTransition = (typeof SYSTEM_TRANSITIONS)[number];
export type AnyAttendanceTransition = AttendanceTransition | SystemTransition;

interface TransitionDef {
  from: readonly AttendanceState[];
  to: AttendanceState;
}

// Spec 3.2 table, verbatim. `reject`: "every state except rejected, participated and noshow".
export const TRANSITION_TABLE: Readonly<Record<AnyAttendanceTransition, TransitionDef>> = {
  confirm: { from: ['waiting', 'waitlisted', 'rejected', 'withdrawn', 'unfulfilled'], to: 'confirmed' },
  waitlist: { from: ['waiting', 'confirmed', 'rejected', 'withdrawn', 'unfulfilled'], to: 'waitlisted' },
  reject: {
    from: ATTENDANCE_STATES.filter((s) => s !== 'rejected' && s !== 'participated' && s !== 'noshow'),
    to: 'rejected',
  },
  withdraw: {
    from: ['waiting', 'confirmed', 'waitlisted', 'rejected', 'email_unconfirmed', 'consents_outstanding'],
    to: 'withdrawn',
  },
  reset: { from: ['confirmed', 'waitlisted', 'rejected', 'withdrawn', 'unfulfilled'], to: 'waiting' },
  unfulfill: { from: ['waiting', 'confirmed', 'waitlisted', 'rejected', 'withdrawn'], to: 'unfulfilled' },
  participated: { from: ['confirmed', 'waitlisted', 'rejected', 'withdrawn', 'unfulfilled'], to: 'participated' },
  noshow: { from: ['confirmed'], to: 'noshow' },
  // Spec 3.2 leaves source/target open; D10 says they appear only for `waiting`. Chosen: an application
  // without an account waits for the e-mail confirmation or the guardian's consent (spec 3.1 meanings).
  await_email: { from: ['waiting'], to: 'email_unconfirmed' },
  await_consents: { from: ['waiting'], to: 'consents_outstanding' },
};

export function isAttendanceState(value: unknown): value is AttendanceState {
  return typeof value === 'string' && (ATTENDANCE_STATES as readonly string[]).includes(value);
}

export function isAttendanceTransition(value: unknown): value is AttendanceTransition {
  return typeof value === 'string' && (ATTENDANCE_TRANSITIONS as readonly string[]).includes(value);
}

export function isSystemTransition(value: unknown): value is SystemTransition {
  return typeof value === 'string' && (SYSTEM_TRANSITIONS as readonly string[]).includes(value);
}

/** Client transitions the state allows (a state conflict's `possible` list; D10: without await_*). */
export function possibleTransitions(state: AttendanceState): AttendanceTransition[] {
  return ATTENDANCE_TRANSITIONS.filter((t) => TRANSITION_TABLE[t].from.includes(state));
}

/**
 * The application's `transitions` field (spec 2.2): ignores the caller's permissions; for `waiting`
 * it also names the system-only await_email / await_consents (D10).
 */
export function availableTransitions(state: AttendanceState): AnyAttendanceTransition[] {
  const system = SYSTEM_TRANSITIONS.filter((t) => TRANSITION_TABLE[t].from.includes(state));
  return [...possibleTransitions(state), ...system];
}

export type TransitionResult =
  | { ok: true; from: AttendanceState; to: AttendanceState }
  | {
      ok: false;
      /** unknown_transition and system_only are invalid input, not_allowed a state conflict (D10). */
      reason: 'unknown_transition' | 'system_only' | 'not_allowed';
      current: AttendanceState;
      possible: AttendanceTransition[];
    };

/** Validates a transition sent through the API (spec 3.4, D10). */
export function applyTransition(state: AttendanceState, transition: string): TransitionResult {
  const possible = possibleTransitions(state);
  if (isSystemTransition(transition)) return { ok: false, reason: 'system_only', current: state, possible };
  if (!isAttendanceTransition(transition)) {
    return { ok: false, reason: 'unknown_transition', current: state, possible };
  }
  if (!possible.includes(transition)) return { ok: false, reason: 'not_allowed', current: state, possible };
  return { ok: true, from: state, to: TRANSITION_TABLE[transition].to };
}

/** For the system itself (await_email / await_consents, also allowed for client transitions). */
export function applySystemTransition(state: AttendanceState, transition: AnyAttendanceTransition): TransitionResult {
  if (TRANSITION_TABLE[transition].from.includes(state)) {
    return { ok: true, from: state, to: TRANSITION_TABLE[transition].to };
  }
  return { ok: false, reason: 'not_allowed', current: state, possible: possibleTransitions(state) };
}

/** The state conflict's `detail` line (spec 3.4: names the current state and lists the possible transitions). */
export function notAllowedDetail(state: AttendanceState, transition: string): string {
  const possible = possibleTransitions(state);
  return (
    `Transition "${transition}" is not possible from state "${state}". ` +
    `Possible transitions: ${possible.length ? possible.join(', ') : 'none'}.`
  );
}

/** Organisers may apply every transition but `withdraw` (spec 4.3 "Transition"). */
export function organiserMayApply(transition: AttendanceTransition): boolean {
  return transition !== 'withdraw';
}

/**
 * Whether a state change is a decision on the participant list, i.e. the list must be reordered
 * (spec 3.2 "participant list reordered", D10 sorting). Any real change of state is.
 */
export function isParticipantListDecision(from: AttendanceState, to: AttendanceState): boolean {
  return from !== to;
}

/** Leaving `confirmed` frees a place (spec 3.2 withdraw; D10 vacancies count confirmed only). */
export function freesPlace(from: AttendanceState, to: AttendanceState): boolean {
  return from === 'confirmed' && to !== 'confirmed';
}

/**
 * D10: a confirmed place given up while the offer's list is still being filled moves the waiting list up
 * (withdraw, reject, reset, unfulfill). A child who took part or did not turn up leaves no place to fill, and
 * one the team moved to the waiting list would, by its list position (D10 `sorting`), get the place straight back.
 */
export function freesPlaceForRefill(from: AttendanceState, to: AttendanceState): boolean {
  return from === 'confirmed' && (to === 'withdrawn' || to === 'rejected' || to === 'waiting' || to === 'unfulfilled');
}

/** D8/D10: a charge is cancelled when an unpaid application leaves confirmed, except for participated/noshow. */
export function cancelsCharge(from: AttendanceState, to: AttendanceState, paid: boolean): boolean {
  return !paid && from === 'confirmed' && to !== 'confirmed' && to !== 'participated' && to !== 'noshow';
}
