// Jest runs in its native ESM mode (see README "Tests"): NestJS 12 ships ESM only, and so does this project.
// ts-jest only transpiles (isolatedModules); `npm run typecheck` does the type checking.
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/examples', '<rootDir>/packages/embedded-mongo/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The engine's TypeScript source, so tests need no build of it (at run time the package's dist/ is imported).
    '^@parley/embedded-mongo$': '<rootDir>/packages/embedded-mongo/src/index.ts',
    // Its ES build imports JSON without an import attribute, which Jest's ESM loader warns about; same code as CJS.
    '^libphonenumber-js$': '<rootDir>/node_modules/libphonenumber-js/index.cjs',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  setupFilesAfterEnv: ['<rootDir>/test/support/esm-interop.setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
