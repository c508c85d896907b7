// Jest runs in its native ESM mode (see docs/architecture.md, "Tests"): NestJS 12 ships ESM only, and so does this project.
// ts-jest only transpiles (isolatedModules); `npm run typecheck` does the type checking.
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/examples'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // Its ES build imports JSON without an import attribute, which Jest's ESM loader warns about; same code as CJS.
    '^libphonenumber-js$': '<rootDir>/node_modules/libphonenumber-js/index.cjs',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  setupFilesAfterEnv: ['<rootDir>/test/support/esm-interop.setup.ts', '<rootDir>/test/support/close-open-apps.setup.ts'],
  testTimeout: 30000,
  maxWorkers: 2,
};
