// ESLint 9 flat config: `npm run lint` (part of `npm test`). typescript-eslint's recommended rules, plus the type-aware
// rules that catch real bugs in async code: a promise nobody awaits or catches (no-floating-promises), a promise
// where a plain value is expected, such as an async callback to a void API (no-misused-promises), and awaiting
// what is not a promise (await-thenable). Formatting is Prettier's business (see .prettierrc.json), not ESLint's.
import eslint from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', 'data/**', 'clients/typescript/schema.d.ts', 'src/openapi.metadata.ts'],
  },
  eslint.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // `any` marks the few places generic code takes any kind (a lane kind, a Mongoose model); `Function` is what
      // Nest's metadata is keyed by (a controller's class, a handler). Both are deliberate here.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Input validation refuses control characters by naming them in a character class.
      'no-control-regex': 'off',
      // `_`-prefixed names are deliberately unused (a destructured field left out, an interface's parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // SASLprep's table of characters mapped to nothing lists combining marks one by one, on purpose.
    files: ['packages/embedded-mongo/src/auth/users.ts'],
    rules: { 'no-misleading-character-class': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
);
