// The participant list of an offer (spec 2.2, 4.2, 4.3; D5, D10): the one entry for every resource that
// changes a list. Each write locks the offer's row first (lock.ts), renumbers `sorting` 1..n (lock.ts),
// appends a new application in one statement (append.ts), moves the waiting list up (refill.ts), and tells
// the family (decision-mail.ts); status changes are recorded as events (events.ts).
export { lockOffer, lockOffers, loadList, reorderList, saveOrder, type ListRow, type LockedOffer } from './lock.js';
export {
  appendApplication, participantLockKey, type AppendInput, type AppendOutcome, type AppendResult,
} from './append.js';
export { decisionMail, queueDecisionMail } from './decision-mail.js';
export {
  REFILL_REASON, refillAfterCapacityChange, refillIfFirstComeRunning, refillLocked, requestRefill, runRefillJob, type RefillJob,
} from './refill.js';
export { accountsOf, statusChanged, type AttendanceRefs } from './events.js';
export { confirmedCount, transitionLocked } from './transitions.js';
