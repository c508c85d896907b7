// The framework's own cost: a minimal NestJS app on Express, one controller with a GET /body/<name> route
// per scenario returning the app's answer as an object (Nest serializes it, as in the app). No guards,
// pipes, filters or logger; ETag and x-powered-by off as in the app (src/app.setup.ts), so the gap to
// the app is its own pipeline: authentication, rate limit, tenancy, validation, database.
// Run as a child by run.mjs: node bare-nest.server.mjs <bodies.json>, env PORT.
import { readFileSync } from 'node:fs';
import { serveBare } from './bare-app.mjs';

await serveBare(JSON.parse(readFileSync(process.argv[2], 'utf8')));
