// Families (spec 2.1: accounts and their children) as other resources refer to them: an account named by
// UUID, base58 or e-mail, an account's modification when its children change, and display names in SQL.
export { resolveAccountRef, touchAccounts } from './accounts.js';
export { fullNameSql, participantFieldSql, participantNameSql } from './names.js';
export { lockAccounts, lockFamily, lockParticipants, type RowLock } from './lock.js';
