import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CachedReflector, PerRoute } from './route-metadata.js';

const ROLE = 'test:role';

@SetMetadata(ROLE, 'class')
class Parent {
  @SetMetadata(ROLE, 'handler')
  decorated(): void {}
  plain(): void {}
}

class Child extends Parent {}

describe('CachedReflector', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('reads a key of a controller and handler once: later requests are answered from memory', () => {
    const lookups = jest.spyOn(Reflector.prototype, 'getAllAndOverride');
    const reflector = new CachedReflector();
    for (let i = 0; i < 3; i++) reflector.getAllAndOverride(ROLE, [Parent.prototype.decorated, Parent]);
    expect(lookups).toHaveBeenCalledTimes(1);
  });

  it('answers as the Reflector does, per controller and handler, the first time and from memory after', () => {
    const reflector = new CachedReflector();
    for (let i = 0; i < 2; i++) {
      expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.decorated, Parent])).toBe('handler');
      expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.plain, Parent])).toBe('class');
      // The same handler under a subclass: looked up for that pair (the class metadata is inherited).
      expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.plain, Child])).toBe('class');
      expect(reflector.getAllAndOverride('test:absent', [Parent.prototype.plain, Parent])).toBeUndefined();
      expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.plain])).toBeUndefined();
    }
  });

  it('keeps a pair apart from another controller sharing its handler', () => {
    const reflector = new CachedReflector();
    class Other {}
    SetMetadata(ROLE, 'other')(Other);
    expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.plain, Parent])).toBe('class');
    expect(reflector.getAllAndOverride(ROLE, [Parent.prototype.plain, Other])).toBe('other');
  });
});

describe('PerRoute', () => {
  it('computes a value once per controller and handler, apart for a handler two controllers share', () => {
    const routes = new PerRoute<string>();
    const computed: string[] = [];
    const value = (controller: Function, handler: Function) =>
      routes.get(controller, handler, () => {
        computed.push(`${controller.name}.${handler.name}`);
        return `${controller.name}.${handler.name}`;
      });
    for (let i = 0; i < 2; i++) {
      expect(value(Parent, Parent.prototype.plain)).toBe('Parent.plain');
      expect(value(Child, Parent.prototype.plain)).toBe('Child.plain');
      expect(value(Parent, Parent.prototype.decorated)).toBe('Parent.decorated');
    }
    expect(computed).toEqual(['Parent.plain', 'Child.plain', 'Parent.decorated']);
  });
});
