// ESLint (flat config) with typescript-eslint's type-aware rules. `npm run lint`; `npm test`
// runs it too. The cache (.eslintcache) keeps repeat runs to changed files.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', 'model-repository/**', 'coverage/**', 'load-tests/results/**'],
  },
  js.configs.recommended,
  // A stale eslint-disable comment fails the lint like any other finding.
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // Each file is checked with the tsconfig that owns it (the root one, or a package's).
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        // node:test's test()/describe() return promises the runner itself awaits.
        { allowForKnownSafeCalls: [{ from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] }] },
      ],
      // knex's where((q) => q...) hands back a thenable builder: not a promise passed by mistake.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `async` without `await` is deliberate: it turns a throw into a rejection and matches a Promise-returning interface.
      '@typescript-eslint/require-await': 'off',
      // Shapes (number[]) in error messages read fine as "1,512,512,3".
      '@typescript-eslint/restrict-template-expressions': ['error', { allowArray: true, allowNumber: true }],
      // Rejecting with an AbortSignal's reason (unknown) (typed any) is the platform's own idiom.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    // Tests read parsed JSON bodies and manifests loosely typed on purpose; their asserts do the checking.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // assert.rejects(fn) and friends are handed methods that do not use `this`.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // JavaScript: the bin launchers (Node) and the k6 scripts (k6's own runtime and globals).
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The console's DOM event handlers are async on purpose; each one reports its own failure.
    files: ['web/console/**/*.ts'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }] },
  },
  {
    // k6's TypeScript helper is outside every tsconfig: syntax rules only.
    files: ['load-tests/**/*.ts'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  {
    files: ['load-tests/**/*.js', 'load-tests/**/*.ts'],
    languageOptions: { globals: { __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly', open: 'readonly' } },
  },
);
