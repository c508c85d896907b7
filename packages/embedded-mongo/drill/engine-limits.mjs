// Engine limits drill: what a hostile or broken client can hold of a standalone engine (default limits but a
// 5 s idle timeout, so the drill need not wait the default 10 minutes). Phase 1: 10 connections send a 45 MB
// message each at once, while a driver client keeps pinging; the engine's RSS is sampled throughout. Phase 2:
// 5 000 sockets connect and stay silent; how many the engine holds, and for how long. Prints the figures; exits 1
// if a limit did not hold (RSS growth past the total buffer limit plus what decoding costs, a message neither
// served nor refused with a MongoDB error, the bystander not served, more sockets held than allowed, idle ones
// not closed).
// Run: npm run drill -- engine-limits   (or node drill/engine-limits.mjs after npm run build)
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { BSON, MongoClient } from 'mongodb';
import { startEngine } from './lib/engine.mjs';

const BIG_CLIENTS = 10;
const BIG_BYTES = 45_000_000;
const IDLE_SOCKETS = 5000;
const IDLE_TIMEOUT_S = 5;
/** When the silent sockets are counted: after the refused ones are gone (2 s), before the idle timeout. */
const HELD_CHECK_S = 3;
const MAX_CONNECTIONS = 1000;
const TOTAL_BUFFER_MIB = 128;
/** Two messages' worth of decoding (the 45 MB string each becomes) on top of the buffer limit. */
const RSS_GROWTH_LIMIT_MIB = TOTAL_BUFFER_MIB + 2 * (BIG_BYTES / 2 ** 20) + 64;
const OP_MSG = 2013;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const violations = [];

function rssMiB(pid) {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
}

/** `{ ping: 1, pad: <string>, $db: 'admin' }` as an OP_MSG of `bytes` bytes, written by hand (no 45 MB serialize). */
function bigPing(bytes, requestId) {
  const tail = Buffer.from(BSON.serialize({ $db: 'admin' })).subarray(4, -1); // the $db element
  const head = Buffer.from(BSON.serialize({ ping: 1 })).subarray(4, -1);
  const padLength = bytes - 16 - 5 - 4 - head.length - (1 + 4 + 4 + 1) - tail.length - 1;
  const doc = Buffer.alloc(bytes - 21);
  let at = doc.writeInt32LE(doc.length, 0);
  at += head.copy(doc, at);
  doc[at++] = 0x02;
  at += doc.write('pad\0', at, 'latin1');
  at = doc.writeInt32LE(padLength + 1, at);
  doc.fill('x', at, at + padLength);
  at += padLength + 1; // the string's terminating zero is already there
  at += tail.copy(doc, at);
  doc[at] = 0;
  const header = Buffer.alloc(21);
  header.writeInt32LE(bytes, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(OP_MSG, 12);
  return Buffer.concat([header, doc]);
}

/** Sends `message` on a fresh socket; resolves with the reply document, or 'closed'. */
function sendAndRead(port, message) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(message));
    let received = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 4 && received.length >= received.readInt32LE(0)) {
        resolve(BSON.deserialize(received.subarray(21, received.readInt32LE(0))));
        socket.destroy();
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve('closed'));
  });
}

/** A driver client pinging one ping at a time until `stop()`; answers its slowest round trip and its failures. */
function bystander(uri) {
  let running = true;
  const done = (async () => {
    const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
    let slowest = 0;
    let failures = 0;
    let pings = 0;
    while (running) {
      const started = Date.now();
      try {
        await client.db('admin').command({ ping: 1 });
        pings += 1;
      } catch {
        failures += 1;
      }
      slowest = Math.max(slowest, Date.now() - started);
      await sleep(20);
    }
    await client.close();
    return { slowest, failures, pings };
  })();
  return {
    stop: () => {
      running = false;
      return done;
    },
  };
}

async function bigMessages(engine, port) {
  const before = rssMiB(engine.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(engine.pid))), 25);
  const watcher = bystander(`${engine.uri}/admin`);
  await sleep(300);
  const started = Date.now();
  const replies = await Promise.all(Array.from({ length: BIG_CLIENTS }, (_, i) => sendAndRead(port, bigPing(BIG_BYTES, i + 1))));
  const seconds = (Date.now() - started) / 1000;
  await sleep(2000);
  clearInterval(sampler);
  const after = rssMiB(engine.pid);
  const served = replies.filter((r) => r !== 'closed' && r.ok === 1).length;
  const refused = replies.filter((r) => r !== 'closed' && r.ok === 0);
  const closed = replies.filter((r) => r === 'closed').length;
  const codes = [...new Set(refused.map((r) => `${r.code} ${r.codeName}`))].join(', ');
  const ping = await watcher.stop();
  console.log(
    `${BIG_CLIENTS} connections x ${BIG_BYTES / 1e6} MB at once (${seconds.toFixed(1)} s): ${served} served, ${refused.length} refused (${codes || 'none'}), ${closed} closed; ` +
      `engine RSS ${before.toFixed(0)} MiB before, peak ${peak.toFixed(0)}, ${after.toFixed(0)} MiB 2 s after; ` +
      `bystander: ${ping.pings} pings, slowest ${ping.slowest} ms, ${ping.failures} failed`,
  );
  if (peak - before > RSS_GROWTH_LIMIT_MIB) violations.push(`engine RSS grew by ${(peak - before).toFixed(0)} MiB (limit ${RSS_GROWTH_LIMIT_MIB.toFixed(0)})`);
  if (closed > 0) violations.push(`${closed} big messages got no answer (connection closed)`);
  if (served === 0) violations.push('no big message was served: the total buffer should admit at least two');
  if (ping.failures > 0) violations.push(`the bystander's pings failed ${ping.failures} times`);
}

async function idleSockets(engine, port) {
  const before = rssMiB(engine.pid);
  const sockets = [];
  for (let i = 0; i < IDLE_SOCKETS; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    sockets.push(socket);
    if (i % 500 === 499) await sleep(50);
  }
  await sleep(HELD_CHECK_S * 1000);
  const held = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
  const rss = rssMiB(engine.pid);
  const watcher = bystander(`${engine.uri}/admin`);
  await sleep((IDLE_TIMEOUT_S - HELD_CHECK_S) * 1000 + 2000);
  const ping = await watcher.stop();
  const stillOpen = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
  console.log(
    `${IDLE_SOCKETS} silent sockets: ${held} held by the engine after ${HELD_CHECK_S} s (${IDLE_SOCKETS - held} closed over the ${MAX_CONNECTIONS}-connection limit), ` +
      `engine RSS ${before.toFixed(0)} -> ${rss.toFixed(0)} MiB; ${stillOpen} still open after the ${IDLE_TIMEOUT_S} s idle timeout; ` +
      `a new client then: ${ping.pings} pings, ${ping.failures} failed`,
  );
  for (const socket of sockets) socket.destroy();
  if (held > MAX_CONNECTIONS) violations.push(`${held} silent sockets held, more than the ${MAX_CONNECTIONS} allowed`);
  if (stillOpen > 0) violations.push(`${stillOpen} silent sockets still open after the idle timeout`);
  if (ping.pings === 0) violations.push('a new client could not be served once the idle sockets were closed');
}

async function main() {
  const engine = await startEngine({ args: ['--idle-timeout', String(IDLE_TIMEOUT_S)] });
  const port = Number(new URL(engine.uri).port);
  try {
    await bigMessages(engine, port);
    await idleSockets(engine, port);
  } finally {
    await engine.stop();
  }
  if (violations.length) {
    console.log(`\nVIOLATIONS:\n  ${violations.join('\n  ')}`);
    process.exit(1);
  }
  console.log('\nEngine limits drill passed.');
}

await main();
