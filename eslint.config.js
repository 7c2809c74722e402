// ESLint (flat config) with typescript-eslint's type-aware rules. `npm run lint`; `npm test`
// runs it too. The cache (.eslintcache) keeps repeat runs to changed files.
import js from '@eslint/js';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// The layer map of src/ (docs/architecture.md draws it). Each room is a directory of src/;
// its entry lists what it may import besides itself and the shared kernel, src/deadline.ts
// and src/backoff.ts (deadlines, abort signals, retries; no imports of their own). Paths are relative to src/. Not
// listed: the composition roots (src/app.ts and its plugins in src/app, src/server.ts,
// src/cli), which may import every room; no room may import them, nor any module its entry
// does not name.
// Dependencies point inward: recognition (the use cases, their ports and domain types)
// imports no other room, and the adapters import its ports.
const LAYERS = {
  // The centre: the use cases (admission, the deadline pipeline, the batch fan-out), the
  // ports they need (repositories, detector, image fetcher and store) and the domain types.
  recognition: [],
  // Adapters of recognition's ports, reading their part of the typed config.
  images: ['./recognition', './config.ts'], // image fetch, decode, the image stores
  models: ['./recognition', './config.ts'], // the model catalog and its sources
  limits: ['./recognition', './config.ts'], // the rate limiter (Redis or in-process)
  store: ['./recognition'], // PostgreSQL repositories
  // The detector: decodes with src/images, reads the catalog of src/models, traces its
  // gRPC calls with src/telemetry/tracing.ts (and nothing else of telemetry).
  inference: ['./recognition', './images', './models', './telemetry/tracing.ts', './config.ts'],
  // Metrics, tracing, logs. instrument.ts wraps the backend seam, so it may see its types.
  telemetry: ['./recognition', './inference/backend.ts'],
  // The public HTTP API: routes call the use case. Besides recognition it authenticates keys
  // with the key repository and translates database faults; never the database itself.
  api: ['./recognition', './images', './limits', './store/keys.ts', './store/db-faults.ts', './telemetry/metrics.ts', './config.ts'],
  // The web console's API: a second HTTP adapter, on the API's errors and the repositories.
  console: ['./recognition', './api', './store', './images', './models', './config.ts'],
  // The Kubernetes operator: its own program. It reads the settings table (env names, CRD
  // bounds), never the API's config loader (src/config.ts) or any room of the API.
  operator: ['./settings.ts'],
};

const layerZones = [
  ...Object.entries(LAYERS).map(([room, allowed]) => ({
    target: `./src/${room}`,
    from: './src',
    except: [`./${room}`, './deadline.ts', './backoff.ts', './contract', ...allowed],
    message: `src/${room} may import ${allowed.length > 0 ? allowed.join(', ') : 'no other room'} (the layer map in eslint.config.js, docs/architecture.md).`,
  })),
  // The top-level modules the rooms lean on import no room.
  { target: './src/deadline.ts', from: './src', except: ['./deadline.ts'] },
  { target: './src/backoff.ts', from: './src', except: ['./backoff.ts'] },
  // The public API's wire schemas and their types (TypeBox): every room may import them.
  { target: './src/contract', from: './src', except: ['./contract'] },
  { target: './src/settings.ts', from: './src', except: ['./settings.ts'] },
  { target: './src/config.ts', from: './src', except: ['./config.ts', './settings.ts'] },
];

// Drivers and frameworks stay in the adapters: the use case knows none of them.
const ADAPTER_PACKAGES = [
  'fastify', 'fastify-plugin', '@fastify/*', 'knex', 'pg', 'ioredis', '@grpc/*', 'onnxruntime-node', 'sharp',
  'undici', '@aws-sdk/*', '@kubernetes/*', 'prom-client', '@opentelemetry/*', 'pino', 'nodemailer',
];

export default tseslint.config(
  {
    // packages/client/src/openapi.ts is generated (npm run generate) and checked by test/generated.test.ts.
    ignores: ['**/dist/**', '**/node_modules/**', 'model-repository/**', 'coverage/**', 'load-tests/results/**', 'packages/client/src/openapi.ts'],
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
    // Boundaries: no import cycle anywhere in src/ (type-only imports aside: they vanish at
    // run time) and the layer map above. Paths resolve like Node's NodeNext (./x.js is x.ts).
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
    },
  },
  {
    files: ['src/recognition/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ADAPTER_PACKAGES, message: 'src/recognition knows no driver or framework: define a port, implement it in an adapter.' }] },
      ],
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
