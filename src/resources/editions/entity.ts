import { defineEntity, p } from '@mikro-orm/core';
import { PROCEDURES, TASK_TYPES } from '../../domain/edition-phases.js';

// Tables of Migration20261121001000Editions. The phases are a table of their own (`edition_tasks`), so
// offers can filter by the edition's effective state in SQL.
export const EditionSchema = defineEntity({
  name: 'Edition',
  tableName: 'editions',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    name: p.text(),
    alias: p.text().unique(),
    procedure: p.enum(PROCEDURES).default('firstcome'),
    online: p.boolean().default(true),
    releaseParticipantLists: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Edition extends EditionSchema.class {}
EditionSchema.setClass(Edition);

export const EditionTaskSchema = defineEntity({
  name: 'EditionTask',
  tableName: 'edition_tasks',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    // The relation lets the unit of work insert the edition before its tasks and delete tasks first.
    edition: p.manyToOne(Edition).fieldName('edition_uuid').deleteRule('cascade'),
    position: p.integer(),
    type: p.enum(TASK_TYPES),
    title: p.text().nullable(),
    begin: p.datetime().fieldName('begin_at').nullable(),
    end: p.datetime().fieldName('end_at').nullable(),
    applicationSystem: p.enum(PROCEDURES).nullable(),
    maxApplications: p.integer().nullable(),
  },
});

export class EditionTask extends EditionTaskSchema.class {}
EditionTaskSchema.setClass(EditionTask);
