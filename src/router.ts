import { router } from './platform/http/trpc.js';
import { categoriesRouter } from './resources/categories/router.js';
import { organisersRouter } from './resources/organisers/router.js';
import { editionsRouter } from './resources/editions/router.js';
import { offersRouter } from './resources/offers/router.js';
import { accountsRouter } from './resources/accounts/router.js';
import { participantsRouter } from './resources/participants/router.js';
import { attendancesRouter } from './resources/attendances/router.js';
import { debtorsRouter } from './resources/debtors/router.js';
import { bookingsRouter } from './resources/bookings/router.js';
import { ledgersRouter } from './resources/ledgers/router.js';
import { receiptsRouter } from './resources/receipts/router.js';
import { eventsRouter } from './resources/events/router.js';
import { webhooksRouter } from './resources/webhooks/router.js';
import { filesRouter } from './resources/files/router.js';
import { familyApplicationsRouter } from './resources/attendances/family-router.js';

// Every resource's procedures; the REST paths live in each procedure's meta.
export const appRouter = router({
  categories: categoriesRouter,
  organisers: organisersRouter,
  editions: editionsRouter,
  offers: offersRouter,
  accounts: accountsRouter,
  participants: participantsRouter,
  attendances: attendancesRouter,
  debtors: debtorsRouter,
  bookings: bookingsRouter,
  ledgers: ledgersRouter,
  receipts: receiptsRouter,
  events: eventsRouter,
  webhooks: webhooksRouter,
  files: filesRouter,
  familyApplications: familyApplicationsRouter,
});

export type AppRouter = typeof appRouter;
