// The framework's own cost: a minimal NestJS app on Express, one controller with a GET /body/<name> route
// per scenario returning the app's answer as an object (Nest serializes it, as in the app). No guards,
// pipes, filters or logger; ETag and x-powered-by off as in the app (src/app.setup.ts), so the gap to
// the app is its own pipeline: authentication, rate limit, tenancy, validation, database.
// Run as a child by run.mjs: node bare-nest.server.mjs <bodies.json>, env PORT.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';

const bodies = JSON.parse(readFileSync(process.argv[2], 'utf8'));

class BareController {}
for (const [name, body] of Object.entries({ ...bodies, ready: '"ok"' })) {
  const answer = JSON.parse(body);
  const method = `serve_${name.replace(/\W/g, '_')}`;
  BareController.prototype[method] = () => answer;
  Reflect.decorate([Get(name === 'ready' ? 'ready' : `body/${name}`)], BareController.prototype, method,
    Object.getOwnPropertyDescriptor(BareController.prototype, method));
}
Reflect.decorate([Controller()], BareController);

class BareModule {}
Reflect.decorate([Module({ controllers: [BareController] })], BareModule);

const app = await NestFactory.create(BareModule, { logger: false });
app.getHttpAdapter().getInstance().disable('x-powered-by').set('etag', false);
await app.listen(Number(process.env.PORT), '127.0.0.1');
