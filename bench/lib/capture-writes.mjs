// The database commands a write route issues, taken from the driver's command monitoring of real requests: the built
// app (dist/) started in this process on the bench's database (MONGODB_URI, with monitorCommands), each request of
// <requests.json> sent to it twice (the first settles what a repeat finds: the contact known, its conversation open;
// the second is the one kept), and every command started in that request's async context before its answer was sent
// is written, with the server's reply, to <out.json> as canonical Extended JSON (types kept): `commands`, what the
// floor replays. Two kinds are not the route's, and go to `shared` (listed, not replayed): the event relay's (the log's
// head, the log, clearing the staged events: started by the request without waiting, batched across requests under
// load) and the shared rate limit's sync (one per process every 500 ms, whatever the number of requests).
// Run as a child by rounds.mjs: node capture-writes.mjs <requests.json> <out.json>, with the bench app's
// environment (its MONGODB_URI, and its JWT_SECRET, so that the bench's tokens hold).
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import { EJSON } from 'bson';
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { AppModule } from '../../dist/app.module.js';
import { configureApp } from '../../dist/app.setup.js';
import { commandOutcome } from './command-outcome.mjs';

/** Not the command, but how the driver sends it to this server: left out of what the floor replays. */
const SESSION_FIELDS = ['lsid', '$clusterTime', 'txnNumber', '$db', 'apiVersion', '$readPreference'];

const requests = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const uri = new URL(process.env.MONGODB_URI);
uri.searchParams.set('monitorCommands', 'true');
const env = { ...process.env, MONGODB_URI: uri.toString(), PORT: '0' };

const context = new AsyncLocalStorage();
let lastCapture = null;
const app = await NestFactory.create(AppModule.forRoot(env), { bodyParser: false, logger: false });
// Ahead of the app's own middleware: everything the request runs inherits its context.
app.use((request, response, next) => {
  const capture = request.headers['x-capture'] === '1' ? { commands: [], answered: false } : null;
  if (!capture) return next();
  response.on('finish', () => (capture.answered = true));
  lastCapture = capture;
  context.run(capture, next);
});
configureApp(app);
await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;

const client = app.get(getConnectionToken()).getClient();
const started = new Map();
client.on('commandStarted', (event) => {
  const capture = context.getStore();
  if (!capture) return;
  const command = { ...event.command };
  for (const field of SESSION_FIELDS) delete command[field];
  const entry = { name: event.commandName, command };
  // After the answer only the relay's work is expected; anything else would be a reaction, not the route.
  if (capture.answered && !sharedWork(entry)) return;
  capture.commands.push(entry);
  started.set(event.requestId, entry);
});
client.on('commandSucceeded', (event) => {
  const entry = started.get(event.requestId);
  if (!entry) return;
  started.delete(event.requestId);
  // The floor checks that its replay of the command does the same.
  entry.reply = commandOutcome(event.reply);
});

/** Why a command is not the route's own (see above), or null when it is. */
function sharedWork({ name, command }) {
  const collection = command[name];
  if (collection === 'rate_limit_counters') return 'rate limit sync';
  if (collection === 'event_log_heads' || collection === 'events') return 'event relay';
  if (name === 'update' && command.updates?.every((update) => update.u?.$pull?.pendingEvents)) return 'event relay';
  return null;
}

const captured = {};
try {
  for (const { name, method, path, headers, body } of requests) {
    for (const kept of [false, true]) {
      const response = await fetch(base + path, { method, headers: { ...headers, ...(kept ? { 'x-capture': '1' } : {}) }, body });
      const text = await response.text();
      if (!response.ok) throw new Error(`capture ${name}: ${method} ${path} answered ${response.status} ${text}`);
      if (!kept) continue;
      // The relay's work, started by the request, lands within moments of the answer.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const all = lastCapture.commands;
      captured[name] = {
        status: response.status,
        commands: all.filter((entry) => !sharedWork(entry)),
        shared: all.filter(sharedWork).map((entry) => ({ name: entry.name, collection: entry.command[entry.name], why: sharedWork(entry) })),
      };
    }
  }
} finally {
  await app.close();
}
writeFileSync(process.argv[3], EJSON.stringify(captured, { relaxed: false }));
