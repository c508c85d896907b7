import type { ExecutionContext, Type } from '@nestjs/common';

/**
 * What a guard derives from a route's decorators, worked out once per route: decorator metadata is fixed
 * when the classes are declared, and reading it through the Reflector costs several lookups per request.
 * Keyed by controller class and handler, since a handler inherited by two controllers may be decorated
 * differently on each.
 */
export class RouteMetadata<T> {
  private readonly byClass = new WeakMap<Type<unknown>, WeakMap<Function, T>>();

  constructor(private readonly derive: (targets: [Function, Type<unknown>]) => T) {}

  of(context: ExecutionContext): T {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.byClass.get(controller);
    if (handlers === undefined) {
      handlers = new WeakMap();
      this.byClass.set(controller, handlers);
    }
    let derived = handlers.get(handler);
    if (derived === undefined) {
      derived = this.derive([handler, controller]);
      handlers.set(handler, derived);
    }
    return derived;
  }
}
