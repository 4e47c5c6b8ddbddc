// Lint: typescript-eslint's strict, type-aware rules, plus the layering rules
// of docs/architecture.md expressed as import restrictions per directory.
// Formatting is Prettier's job (eslint-config-prettier turns style rules off).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/** Import patterns a layer may not use, each with the reason shown on a violation. */
const forbid = (...rules) => ({
  'no-restricted-imports': ['error', { patterns: rules.map(([group, message]) => ({ group, message })) }],
});

const temporalLayers = ['**/activities/**', '**/workflows/**'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.venv/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // Express 5 handlers may be async; the router awaits them.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      // `(x) => void call(x)`-style callbacks read better as shorthand.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests assert on values they just checked; non-null assertions keep them short.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // afterAll guards for a beforeAll that failed, and fakes implementing async interfaces.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/require-await': 'off',
      // expect.any(), expect.objectContaining() and JSON bodies are `any` by design.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  // Layering: the domain, the store, services and the Python runner know nothing of HTTP or Temporal's layers.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/api/**', 'src/service.ts', 'src/cli/**', 'src/temporal/worker.ts'],
    rules: forbid(
      [['**/api/**', 'express'], 'HTTP belongs to src/api: throw DomainError (src/errors.ts) and let the API map it.'],
      [
        temporalLayers,
        'src/ is imported by activities and workflows, never the other way; wire in the composition root.',
      ],
    ),
  },
  {
    files: ['src/api/**/*.ts'],
    rules: forbid([temporalLayers, "Routes call services; Temporal activities and workflows are the worker's."]),
  },
  // Workflow code is replayed: deterministic, no I/O, no Node built-ins.
  {
    files: ['workflows/**/*.ts'],
    rules: forbid(
      [
        ['node:*', 'fs', 'path', 'crypto', 'http', 'https', 'net', 'child_process'],
        'Workflow code is deterministic: do I/O in an activity.',
      ],
      [
        [
          '**/activities/**',
          '**/store/**',
          '**/api/**',
          '**/python/**',
          '**/files/**',
          '**/net/**',
          'got',
          'express',
          'kysely',
          '@temporalio/worker',
          '@temporalio/client',
          '@temporalio/activity',
        ],
        'Workflow code imports only deterministic modules (domain, types); call activities through proxies.',
      ],
    ),
  },
  {
    files: ['activities/**/*.ts'],
    rules: forbid(
      [['**/api/**', 'express'], 'Activities call services; HTTP belongs to src/api.'],
      [['**/workflows/**'], 'Activities do not import workflow code.'],
    ),
  },
  prettier,
);
