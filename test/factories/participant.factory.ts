import type { TestTenant } from '../harness/harness.js';
import { createThroughApi, unique, type Overrides } from './factory.js';

// A participant (child, D6) with a date of birth; no account unless `account` is passed.
export function create(t: TestTenant, overrides: Overrides = {}) {
  return createThroughApi(t, '/participants', {
    firstname: 'Kim',
    lastname: `Kind${unique()}`,
    dateOfBirth: '2016-05-23',
    ...overrides,
  });
}

export const updateBody = { phone: '0170 1234567' };
