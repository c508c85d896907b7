import { afterAll, expect } from '@jest/globals';
import { closeOpenApps } from './open-apps.js';
import { responseMismatches } from './test-app.js';

// After the file's own hooks: an app whose starting hook timed out is closed here once it is up (test/support/open-apps.ts).
afterAll(() => closeOpenApps(), 120_000);

// Every answer the file's tests received matches the OpenAPI document (issue 41: the document validates strictly).
afterAll(() => {
  expect(responseMismatches()).toEqual([]);
});
