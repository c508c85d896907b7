import { afterAll } from '@jest/globals';
import { closeOpenApps } from './open-apps.js';

// After the file's own hooks: an app whose starting hook timed out is closed here once it is up (test/support/open-apps.ts).
afterAll(() => closeOpenApps(), 120_000);
