// The bare NestJS-Express app every floor is (bare-nest, bare-reads and bare-writes .server.mjs): one controller
// with a GET /body/<name> route per scenario answering the app's answer as an object (Nest serializes it, as in the
// app), and GET /ready. No guards, pipes, filters or logger; ETag and x-powered-by off as in the app
// (src/app.setup.ts), so that the gap to the app is its own pipeline.
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';

/**
 * Serves `bodies` (scenario name -> the app's answer as JSON) on PORT. With `work` (scenario name -> async function),
 * only the scenarios it names, each doing its work before it answers.
 */
export async function serveBare(bodies, work) {
  class BareController {}
  for (const [name, body] of Object.entries({ ...bodies, ready: '"ok"' })) {
    const run = work?.[name];
    if (work && !run && name !== 'ready') continue;
    const answer = JSON.parse(body);
    const method = `serve_${name.replace(/\W/g, '_')}`;
    BareController.prototype[method] = run ? async () => (await run(), answer) : () => answer;
    Reflect.decorate(
      [Get(name === 'ready' ? 'ready' : `body/${name}`)],
      BareController.prototype,
      method,
      Object.getOwnPropertyDescriptor(BareController.prototype, method),
    );
  }
  Reflect.decorate([Controller()], BareController);

  class BareModule {}
  Reflect.decorate([Module({ controllers: [BareController] })], BareModule);

  const app = await NestFactory.create(BareModule, { logger: false });
  app.getHttpAdapter().getInstance().disable('x-powered-by').set('etag', false);
  await app.listen(Number(process.env.PORT), '127.0.0.1');
}
