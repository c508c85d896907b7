import { Global, Injectable, Module, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/**
 * A Reflector that answers `getAllAndOverride(key, [handler, controller])` from memory after the first
 * lookup: decorator metadata is fixed once the classes are declared, and the global guards ask for
 * a dozen keys on every request (each lookup walks reflect-metadata's maps). Keyed by controller and
 * handler, since a handler inherited by two controllers may be decorated differently on each; any other
 * shape of `targets` is looked up as usual. One per application (RouteMetadataModule), shared by the global guards.
 */
@Injectable()
export class CachedReflector extends Reflector {
  private readonly byController = new WeakMap<Function, WeakMap<Function, Map<unknown, unknown>>>();

  override getAllAndOverride<TResult = any, TKey = any>(metadataKey: TKey, targets: (Type<any> | Function)[]): TResult {
    if (targets.length !== 2 || typeof targets[0] !== 'function' || typeof targets[1] !== 'function') {
      return super.getAllAndOverride<TResult, TKey>(metadataKey, targets);
    }
    const [handler, controller] = targets;
    let handlers = this.byController.get(controller);
    if (handlers === undefined) {
      handlers = new WeakMap();
      this.byController.set(controller, handlers);
    }
    let keys = handlers.get(handler);
    if (keys === undefined) {
      keys = new Map();
      handlers.set(handler, keys);
    }
    if (keys.has(metadataKey)) return keys.get(metadataKey) as TResult;
    const value = super.getAllAndOverride<TResult, TKey>(metadataKey, targets);
    keys.set(metadataKey, value);
    return value;
  }
}

/** Provides the application's one CachedReflector to the global guards, wherever they are declared. */
@Global()
@Module({ providers: [CachedReflector], exports: [CachedReflector] })
export class RouteMetadataModule {}
