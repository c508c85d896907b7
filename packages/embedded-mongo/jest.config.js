// The engine's own specs (test/), in Jest's native ESM mode like the app's; ts-jest only transpiles
// (isolatedModules), `npm run typecheck` does the type checking. The root jest.config.js runs them too.
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
  testTimeout: 30000,
  maxWorkers: 2,
};
