// Allocation by lot and its commit (D7; the draw is the pure rule of src/domain/lottery.ts): the jobs that
// draw a run and release the held-back decisions, and the edition read they start from.
export { runAllocationJob, runCommitJob, type AllocateJob, type CommitJob } from './jobs.js';
export { editionNotFound, readEdition } from './store.js';
