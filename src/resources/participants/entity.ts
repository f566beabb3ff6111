import { defineEntity, p } from '@mikro-orm/core';

// Participants (D6), the `participants` table of Migration20261121003000Families. `accountUuid` is a plain
// column (FK on delete set null), not a relation: reads are projections, and writes only need the id.
// `pseudonymisedAt` is set by D9's pseudonymisation, which removes names and contact data.
export const ParticipantSchema = defineEntity({
  name: 'Participant',
  tableName: 'participants',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    accountUuid: p.uuid().nullable(),
    firstname: p.text().nullable(),
    lastname: p.text().nullable(),
    /** `YYYY-MM-DD` (MikroORM's date type maps to a string). */
    dateOfBirth: p.date().nullable(),
    email: p.text().nullable(),
    phone: p.text().nullable(),
    pseudonymisedAt: p.datetime().nullable(),
    /** The stable pseudonym written with `pseudonymisedAt` (src/domain/retention.ts). */
    pseudonym: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Participant extends ParticipantSchema.class {}
ParticipantSchema.setClass(Participant);
