import { z } from 'zod';
import { pathId } from '../../platform/http/fields.js';

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
