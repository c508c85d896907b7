import { Global, Injectable, Module, type Type } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/**
 * Values kept per route, computed on its first request: decorator metadata is fixed once the classes are
 * declared. Keyed by controller and handler, since a handler inherited by two controllers may be decorated
 * differently on each.
 */
export class PerRoute<T> {
  private readonly byController = new WeakMap<Function, WeakMap<Function, T>>();

  get(controller: Function, handler: Function, compute: () => T): T {
    let byHandler = this.byController.get(controller);
    if (byHandler === undefined) {
      byHandler = new WeakMap();
      this.byController.set(controller, byHandler);
    }
    let value = byHandler.get(handler);
    if (value === undefined) {
      value = compute();
      byHandler.set(handler, value);
    }
    return value;
  }
}

/**
 * A Reflector that answers `getAllAndOverride(key, [handler, controller])` from memory after the first
 * lookup (each lookup walks reflect-metadata's maps, and the global guards ask for several keys on every
 * request); any other shape of `targets` is looked up as usual. One per application (RouteMetadataModule),
 * shared by the global guards.
 */
@Injectable()
export class CachedReflector extends Reflector {
  private readonly keys = new PerRoute<Map<unknown, unknown>>();

  override getAllAndOverride<TResult = any, TKey = any>(metadataKey: TKey, targets: (Type<any> | Function)[]): TResult {
    if (targets.length !== 2 || typeof targets[0] !== 'function' || typeof targets[1] !== 'function') {
      return super.getAllAndOverride<TResult, TKey>(metadataKey, targets);
    }
    const [handler, controller] = targets;
    const keys = this.keys.get(controller, handler, () => new Map());
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
