import { anyOf, inSchema, type Executor } from '../../platform/db/sql.js';
import type { EventPayloads, NewEvent } from '../../platform/events/events.js';

// Issue 14: the references every application event carries (src/platform/events/payloads.ts), and the one read
// that finds the families (accounts) of the children where the change itself did not read them.

export type AttendanceRefs = { attendance: string; offer: string; edition: string; participant: string; account?: string | null };

type StatusChange = Omit<EventPayloads['attendance.status_changed'], keyof AttendanceRefs | 'decisionReason'> & { decisionReason?: string | null };

export function statusChanged(refs: AttendanceRefs, change: StatusChange): NewEvent {
  const data: EventPayloads['attendance.status_changed'] = {
    ...refs, account: refs.account ?? undefined, ...change, decisionReason: change.decisionReason ?? undefined,
  };
  return { type: 'attendance.status_changed', data };
}

/** The family account of each child (absent: none). One statement for any number of children. */
export async function accountsOf(db: Executor, schema: string, participants: readonly string[]): Promise<Map<string, string | null>> {
  if (participants.length === 0) return new Map();
  const rows = await inSchema(db, schema).selectFrom('participants').select(['uuid', 'account_uuid as account'])
    .where('uuid', '=', anyOf([...new Set(participants)])).execute();
  return new Map(rows.map((r) => [r.uuid, r.account]));
}
