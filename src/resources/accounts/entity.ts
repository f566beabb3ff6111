import { defineEntity, p } from '@mikro-orm/core';

// Family accounts (D6), the `accounts` table of Migration20261121003000Families. The e-mail is unique ignoring
// case (index on lower(email)); `name` is derived from firstname and lastname, never stored.
export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  schema: '*',
  properties: {
    uuid: p.uuid().primary(),
    /** Null only once the account was pseudonymised (D9; Migration20261124150000Retention). */
    email: p.text().nullable(),
    firstname: p.text().nullable(),
    lastname: p.text().nullable(),
    phone: p.text().nullable(),
    street: p.text().nullable(),
    zip: p.text().nullable(),
    city: p.text().nullable(),
    pseudonymisedAt: p.datetime().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    modifiedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Account extends AccountSchema.class {}
AccountSchema.setClass(Account);
