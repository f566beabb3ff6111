import type { FactoryModule } from './factory.js';
import * as account from './account.factory.js';
import * as attendance from './attendance.factory.js';
import * as category from './category.factory.js';
import * as edition from './edition.factory.js';
import * as offer from './offer.factory.js';
import * as organiser from './organiser.factory.js';
import * as participant from './participant.factory.js';
import * as booking from './booking.factory.js';
import * as debtor from './debtor.factory.js';
import * as ledger from './ledger.factory.js';
import * as receipt from './receipt.factory.js';
import * as event from './event.factory.js';
import * as webhook from './webhook.factory.js';
import * as file from './file.factory.js';
import * as familyApplication from './family-application.factory.js';

export type { FactoryModule, FactoryRecord, Overrides } from './factory.js';

// The factory of every resource, by the first segment of its REST path. The tenant-isolation matrix looks
// procedures up here: a new resource in the router fails that matrix until its factory is added.
export const factories: Record<string, FactoryModule> = {
  '/categories': category,
  '/organisers': organiser,
  '/editions': edition,
  '/offers': offer,
  '/accounts': account,
  '/participants': participant,
  '/attendances': attendance,
  '/receipts': receipt,
  '/debtors': debtor,
  '/ledgers': ledger,
  '/bookings': booking,
  '/events': event,
  '/webhooks': webhook,
  '/files': file,
  '/family-applications': familyApplication,
};

/** The factory for a REST path such as `/offers/{uuid}/copy`, or undefined. */
export function factoryFor(path: string): FactoryModule | undefined {
  const segment = `/${path.split('/').filter(Boolean)[0] ?? ''}`;
  return factories[segment];
}
