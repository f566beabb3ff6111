import { router } from './platform/http/trpc.js';
import { categoriesRouter } from './resources/categories/router.js';

// Every resource's procedures; the REST paths live in each procedure's meta.
export const appRouter = router({
  categories: categoriesRouter,
});

export type AppRouter = typeof appRouter;
