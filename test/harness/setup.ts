import { configureZod } from '../../src/platform/http/validation.js';

// vitest's setup file (vitest.config.ts `setupFiles`), run in every test file's process before its imports are
// used: zod's messages set once as the entry points set them (issue 26), whatever a test file imports first.
configureZod();
