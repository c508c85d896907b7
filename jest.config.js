// Jest runs in its native ESM mode (see docs/architecture.md, "Tests"): NestJS 12 ships ESM only, and so does this project.
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
  setupFilesAfterEnv: ['<rootDir>/test/support/esm-interop.setup.ts', '<rootDir>/test/support/close-open-apps.setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
  // Each e2e file loads the app's module graph anew, and jest's ESM loader keeps it: a worker grows by ~25 MB a file,
  // past 1 GB by the end of the suite, and a process that size can take longer than jest's 500 ms to exit on a busy
  // machine ("A worker process has failed to exit gracefully"). A worker past this after a file is replaced.
  workerIdleMemoryLimit: '512MB',
};
