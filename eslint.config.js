// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.paddock/**', 'coverage/**', 'tools/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // A sandbox full of promises: a dropped one is a lost error or a call that never ends.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Numbers and booleans in template literals are fine and common in messages.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // Types are erased by Node's type stripping; a value import of a type would survive at run time.
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
      // Unused names are usually a forgotten wiring; `_name` marks the deliberate ones.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Exhaustive switches over unions (events, error kinds) must fail the lint when a member is added.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      'no-restricted-properties': ['error', {
        object: 'process', property: 'env',
        message: 'Read settings through runtime/config/load.ts (which receives the environment as an argument); capabilities read secrets from config, never process.env.',
      }],
    },
  },
  {
    // Imports point down only (also checked, with every path resolved, by test/architecture/boundaries.test.ts).
    files: ['sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        group: ['**/runtime/**'],
        message: 'sandbox/ sits below runtime/. Pass what it needs in (an interface declared in sandbox/); do not import up.',
      }, {
        group: ['hono', 'hono/*', '@hono/*'],
        message: 'Only runtime/http/** speaks Hono.',
      }] }],
    },
  },
  {
    files: ['sandbox/guest/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        group: ['../*', '!../protocol.ts', '**/runtime/**', 'node:*', 'isolated-vm', 'undici', 'esbuild'],
        message: 'Guest code runs inside the isolate: it may import only sandbox/guest/** and sandbox/protocol.ts.',
      }] }],
    },
  },
  {
    files: ['runtime/**/*.ts', 'scripts/**/*.ts'],
    ignores: ['runtime/http/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{
        group: ['hono', 'hono/*', '@hono/*'],
        message: 'Only runtime/http/** speaks Hono; pass plain values and functions across.',
      }] }],
    },
  },
  {
    // The config loader and the CLI entry are where the environment is read, once.
    files: ['runtime/cli/**', 'scripts/**', 'test/**', 'vitest.config.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    // Tests assert on loosely typed JSON bodies; the strict unsafe-* rules would only add casts there.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
