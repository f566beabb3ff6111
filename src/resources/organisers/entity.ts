import { defineEntity, p } from '@mikro-orm/core';

// The `organisers` table of Migration20261121000100Platform, as it is.
export const OrganiserSchema = defineEntity({
  name: 'Organiser',
  tableName: 'organisers',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    name: p.text(),
    alias: p.text().unique(),
    email: p.text().nullable(),
    phone: p.text().nullable(),
    website: p.text().nullable(),
    street: p.text().nullable(),
    zip: p.text().nullable(),
    city: p.text().nullable(),
    description: p.text().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Organiser extends OrganiserSchema.class {}
OrganiserSchema.setClass(Organiser);
