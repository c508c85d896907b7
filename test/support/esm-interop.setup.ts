import { jest } from '@jest/globals';
import * as nestCommon from '@nestjs/common';
import * as nestCore from '@nestjs/core';

/**
 * @nestjs/throttler and nestjs-pino are CommonJS and `require()` @nestjs/common and @nestjs/core,
 * which are ESM only. Node can do that; Jest's module loader cannot (on Node 24 too, where it refuses the
 * cycle through @nestjs/common). This hands those `require()` calls the very ES modules the test already
 * loaded: no fakes, the same classes.
 */
jest.mock('@nestjs/common', () => nestCommon);
jest.mock('@nestjs/core', () => nestCore);
