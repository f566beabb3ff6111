import { defineEntity, p } from '@mikro-orm/core';

// Offers (D5). Writes go through these entities; reads are SQL projections (service.ts).
// Hosts and categories are plain link tables written in the same transaction.
export type ApplicationQuestion = { uuid: string; label: string; type: 'yn' | 'int' | 'txt' | 'file'; required: boolean };

export const OfferSchema = defineEntity({
  name: 'Offer',
  tableName: 'offers',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    editionUuid: p.uuid(),
    name: p.text(),
    alias: p.text().unique(),
    places: p.array().columnType('text[]'),
    publish: p.text(),
    teaser: p.text().nullable(),
    description: p.text().nullable(),
    fee: p.integer().nullable(),
    minAge: p.integer().nullable(),
    maxAge: p.integer().nullable(),
    minParticipants: p.integer().nullable(),
    maxParticipants: p.integer().nullable(),
    requiresApplication: p.boolean(),
    onlineApplication: p.boolean(),
    applicationDeadline: p.datetime().nullable(),
    applyText: p.text().nullable(),
    meetingPoint: p.text().nullable(),
    meetingAddress: p.text().nullable(),
    meetingLat: p.double().nullable(),
    meetingLng: p.double().nullable(),
    bring: p.text().nullable(),
    wheelchairAccessible: p.boolean(),
    media: p.json<string[]>(),
    comment: p.text().nullable(),
    contact: p.text().nullable(),
    applicationQuestions: p.json<ApplicationQuestion[]>(),
    variantBaseUuid: p.uuid().nullable(),
    wasPublished: p.boolean(),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Offer extends OfferSchema.class {}
OfferSchema.setClass(Offer);

export const OfferDateSchema = defineEntity({
  name: 'OfferDate',
  tableName: 'offer_dates',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    offerUuid: p.uuid(),
    begin: p.datetime(),
    end: p.datetime(),
    recurrence: p.text().nullable(),
    position: p.integer(),
  },
});

export class OfferDate extends OfferDateSchema.class {}
OfferDateSchema.setClass(OfferDate);
