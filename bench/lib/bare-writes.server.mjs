// The stack's floor for a write route: the bare NestJS-Express app of bare-nest.server.mjs, plus the very database
// commands the route issues, as capture-writes.mjs took them from the driver's command monitoring of a real request
// (one after another, as the route awaits them), sent through the driver per request. Each request's commands carry
// fresh ids and times where the route makes new ones (the message's id, its event's id, the time it is stored), so
// that each inserts a new message and moves the conversation as the route does. Checked at start and on every
// request: each command must find, match and change what it did for the app (a floor whose update matched nothing
// would measure less work); a request that does not answers 500, which the bench counts.
// Run as a child by rounds.mjs: node bare-writes.server.mjs <bodies.json> <captured.json>, env PORT, MONGODB_URI.
import { EJSON } from 'bson';
import { MongoClient } from 'mongodb';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { serveBare } from './bare-app.mjs';
import { commandOutcome } from './command-outcome.mjs';

const bodies = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const captured = EJSON.parse(readFileSync(process.argv[3], 'utf8'), { relaxed: false });
const client = await MongoClient.connect(process.env.MONGODB_URI);
const db = client.db();

// The captured file's ids are of the `bson` package EJSON parsed them with, which need not be the driver's own copy.
const isObjectId = (value) => value?._bsontype === 'ObjectId';

/**
 * The values a request makes anew (the inserted documents' ids, event ids, the time the documents are stored at),
 * found in the captured commands, and a function that answers a copy of the commands with new ones in their place.
 */
function freshener(commands) {
  const ids = new Set();
  const times = new Set();
  let ObjectIdType;
  for (const { command } of commands) {
    for (const document of command.documents ?? []) {
      if (isObjectId(document._id)) {
        ids.add(document._id.toHexString());
        ObjectIdType = document._id.constructor;
      }
      if (document.createdAt instanceof Date) times.add(document.createdAt.getTime());
      for (const event of document.pendingEvents ?? []) ids.add(event.id);
    }
  }
  return () => {
    const now = new Date();
    const replaced = new Map([...ids].map((id) => [id, id.startsWith('evt_') ? `evt_${randomBytes(16).toString('base64url')}` : new ObjectIdType()]));
    const copy = (value) => {
      if (isObjectId(value)) return replaced.get(value.toHexString()) ?? value;
      if (value instanceof Date) return times.has(value.getTime()) ? now : value;
      // An id in a string (an event's copy of the message): the new one's hex, or the new event id.
      if (typeof value === 'string') return replaced.has(value) ? String(replaced.get(value)) : value;
      if (Array.isArray(value)) return value.map(copy);
      if (value && typeof value === 'object' && value.constructor === Object)
        return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copy(inner)]));
      return value;
    };
    return commands.map(({ command }) => copy(command));
  };
}

const ROUTES = Object.fromEntries(
  Object.entries(captured).map(([name, { commands }]) => {
    const fresh = freshener(commands);
    const expected = commands.map(({ reply }) => JSON.stringify(reply));
    return [
      name,
      async () => {
        const sent = fresh();
        for (const [at, command] of sent.entries()) {
          const reply = await db.command(command);
          const seen = JSON.stringify(commandOutcome(reply));
          if (seen !== expected[at]) {
            const why = reply.writeErrors?.[0]?.errmsg ?? '';
            throw new Error(
              `bare-writes: the ${name} route's command ${at + 1} (${Object.keys(command)[0]}) did ${seen}, the app's ${expected[at]} ${why}`,
            );
          }
        }
      },
    ];
  }),
);

// Each route's commands once, before serving: a floor that does not do the app's work refuses to start.
for (const write of Object.values(ROUTES)) await write();

await serveBare(bodies, ROUTES);
