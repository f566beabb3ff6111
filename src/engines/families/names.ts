import { sql } from '../../platform/db/sql.js';

// Display names as SQL, shared by the account and participant projections (spec 2.1: a reference's `name` is
// the person's full name; omitted when there is none or the person's data is masked).

/** "firstname lastname" of the row aliased `t`; null when both are empty. */
export function fullNameSql(t: string) {
  return sql<string | null>`nullif(concat_ws(' ', ${sql.ref(`${t}.firstname`)}, ${sql.ref(`${t}.lastname`)}), '')`;
}

/** A participant's name column, or null once the participant was pseudonymised (D9). */
export function participantFieldSql(t: string, column: 'firstname' | 'lastname') {
  return sql<string | null>`case when ${sql.ref(`${t}.pseudonymised_at`)} is null then ${sql.ref(`${t}.${column}`)} end`;
}

/** A participant's full name, or null once the participant was pseudonymised (D9). */
export function participantNameSql(t: string) {
  return sql<string | null>`case when ${sql.ref(`${t}.pseudonymised_at`)} is null then ${fullNameSql(t)} end`;
}
