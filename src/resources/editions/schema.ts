import { z } from 'zod';
import { PROCEDURES, TASK_TYPES } from '../../domain/edition-phases.js';
import { bodyId, listQuery, pathId, timestamp } from '../../platform/http/fields.js';
import { response, timestampOut } from '../../platform/http/response.js';

// D4: editions with their phases (`tasks`) and, from D10 "Lot and commit", their lottery runs (`allocations`).
const name = z.string().trim().min(1).max(200);
const alias = z.string().trim().min(1).max(80);
const procedure = z.enum(PROCEDURES);
const taskType = z.enum(TASK_TYPES);

export const MAX_TASKS = 100;

// trpc-to-openapi coerces the booleans and numbers of every input object, bodies included (so `"false"`
// would become true and `"5"` 5); behind a pipe the adapter leaves them alone and they stay strict.
const strictBoolean = () => z.boolean().pipe(z.boolean());

/** A phase as sent: a task without `uuid` gets one; a task sent with its `uuid` keeps it. */
const taskIn = z
  .object({
    uuid: bodyId().nullish(),
    type: taskType,
    title: z.string().trim().max(200).transform((v) => (v === '' ? null : v)).nullish(),
    begin: timestamp().nullish(),
    end: timestamp().nullish(),
    applicationSystem: procedure.nullish(),
    maxApplications: z.number().int().min(0).max(10_000).pipe(z.number()).nullish(),
  })
  .superRefine((t, ctx) => {
    if (t.begin && t.end && t.end.getTime() < t.begin.getTime()) {
      ctx.addIssue({ code: 'custom', path: ['end'], message: 'The end must not be before the begin.', params: { rule: 'range' } });
    }
  });
export type TaskIn = z.output<typeof taskIn>;

const tasksIn = z
  .array(taskIn)
  .max(MAX_TASKS)
  .superRefine((tasks, ctx) => {
    const seen = new Set<string>();
    tasks.forEach((t, i) => {
      if (!t.uuid) return;
      if (seen.has(t.uuid)) {
        ctx.addIssue({ code: 'custom', path: [i, 'uuid'], message: 'This task appears more than once.', params: { rule: 'unique' } });
      }
      seen.add(t.uuid);
    });
  });

/** Inside `tasks` empty values are shown as null (spec 1.6), so every field is nullable here. */
export const taskOut = z.object({
  uuid: z.string(),
  type: taskType,
  title: z.string().nullable(),
  begin: timestampOut().nullable(),
  end: timestampOut().nullable(),
  applicationSystem: procedure.nullable(),
  maxApplications: z.number().int().nullable(),
}).meta({ id: 'Task', description: 'A phase of the season.' });
export type TaskOut = z.infer<typeof taskOut>;

/** A lottery run (D10 "Lot and commit"), oldest first; `finishedAt` is missing while the run is being drawn. */
export const allocationOut = z.object({
  uuid: z.string(),
  seed: z.number().int(),
  startedAt: timestampOut(),
  finishedAt: timestampOut().optional(),
  confirmed: z.number().int(),
  waitlisted: z.number().int(),
  unfulfilled: z.number().int(),
}).meta({ id: 'Allocation', description: 'One run of the lottery (D7).' });

export const editionOut = z.object({
  uuid: z.string(),
  name: z.string(),
  alias: z.string(),
  /** Effective values at the time of the request (D4): governed by the phases where such tasks exist. */
  procedure,
  online: z.boolean(),
  releaseParticipantLists: z.boolean(),
  tasks: z.array(taskOut),
  allocations: z.array(allocationOut),
  createdAt: timestampOut(),
  modifiedAt: timestampOut(),
}).meta({ id: 'Edition', description: 'One season of the programme.' });
export type EditionOut = z.infer<typeof editionOut>;

export const editionResponse = response(editionOut);
export const editionListResponse = response(z.array(editionOut));

export const listEditionsInput = z.object({ ...listQuery });
export type ListEditionsInput = z.output<typeof listEditionsInput>;

export const editionIdInput = z.object({ uuid: pathId() });

/** Fields with a default ignore null (spec 1.12: they always have a value). */
export const createEditionInput = z.object({
  name,
  alias: alias.nullish(),
  procedure: procedure.nullish(),
  online: strictBoolean().nullish(),
  releaseParticipantLists: strictBoolean().nullish(),
  tasks: tasksIn.nullish(),
});
export type CreateEditionInput = z.output<typeof createEditionInput>;

/**
 * PATCH: only keys sent apply; `name`, `procedure`, `online` and `releaseParticipantLists` ignore null;
 * `alias` null re-derives it from the name; `tasks` replaces the whole list (null empties it). An empty
 * body returns the edition unchanged (spec 1.12, the editions exception).
 */
export const updateEditionInput = z.object({
  uuid: pathId(),
  name: name.nullish(),
  alias: alias.nullish(),
  procedure: procedure.nullish(),
  online: strictBoolean().nullish(),
  releaseParticipantLists: strictBoolean().nullish(),
  tasks: tasksIn.nullish(),
});
export type UpdateEditionInput = z.output<typeof updateEditionInput>;


// D7 bodies. Both are optional (D10: an action whose body is optional accepts no body and no content type).

/** `POST /editions/{uuid}/allocate`: `seed` (any safe integer; drawn by the server when missing), `waitlist` [true]. */
export const allocateEditionInput = z.object({
  uuid: pathId(),
  seed: z.number().int().nullish().meta({ description: 'seed of the draw; the same seed and applications give the same result; missing: drawn and recorded' }),
  waitlist: z.boolean().nullish().meta({ description: 'default true: those without a place are waitlisted in draw order; false: unfulfilled' }),
});
export type AllocateEditionInput = z.output<typeof allocateEditionInput>;

/** `POST /editions/{uuid}/commit`: `notify` [true] e-mails each family once with its children's decisions. */
export const commitEditionInput = z.object({
  uuid: pathId(),
  notify: z.boolean().nullish().meta({ description: 'default true: one e-mail per family listing its children\'s decisions' }),
});
export type CommitEditionInput = z.output<typeof commitEditionInput>;
