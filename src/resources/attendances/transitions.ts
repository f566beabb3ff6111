import {
  ATTENDANCE_TRANSITIONS, isAttendanceTransition, isSystemTransition, organiserMayApply,
} from '../../domain/attendance-states.js';
import type { ServiceContext } from '../../platform/context.js';
import { dbOf } from '../../platform/context.js';
import { forbidden, invalid, violation } from '../../domain/errors.js';
import { assertListEditable } from '../../engines/access/index.js';
import { Attendance } from './entity.js';
import { attendanceNotFound, offerOfAttendance, readAttendance } from './list.js';
import type { AttendanceOut, TransitionAttendanceInput } from './schema.js';
import { lockOffer, transitionLocked } from '../../engines/participant-list/index.js';

// Spec 3.2, 3.4, 4.3 "Transition". The matrix and its messages are the domain's (attendance-states.ts).
// Order of checks: the application (404), the caller's right to change this list (403), the transition's
// name (422: unknown, or system-only await_email/await_consents), the caller's right to this transition
// (organisers never withdraw: 403), then the state (409 naming the current state and the possible ones);
// D10: permission before state.

export async function transitionAttendance(ctx: ServiceContext, input: TransitionAttendanceInput): Promise<AttendanceOut> {
  await ctx.em.transactional(async (em) => {
    const db = dbOf(em);
    const missing = () => attendanceNotFound(input.uuid);
    const offerUuid = await offerOfAttendance(ctx, db, input.uuid);
    if (!offerUuid) throw missing();
    await assertListEditable(ctx, db, offerUuid, missing);
    const name = input.transition;
    if (isSystemTransition(name)) {
      throw invalid([violation('transition', `"${name}" is applied by the system only and cannot be sent.`, 'choice')]);
    }
    if (!isAttendanceTransition(name)) {
      throw invalid([violation('transition', `Unknown transition "${name.slice(0, 40)}". Transitions: ${ATTENDANCE_TRANSITIONS.join(', ')}.`, 'choice')]);
    }
    if (ctx.viewer.kind === 'organiser' && !organiserMayApply(name)) {
      throw forbidden(`Organisers may not apply the transition "${name}".`);
    }
    const offer = await lockOffer(ctx, db, offerUuid);
    const a = await em.findOne(Attendance, { uuid: input.uuid });
    if (!offer || !a) throw missing();
    await transitionLocked(ctx, em, offer, a, name, { commit: input.commit !== false, notify: !!input.notify });
  });
  const out = await readAttendance(ctx, input.uuid);
  if (!out) throw attendanceNotFound(input.uuid);
  return out;
}
