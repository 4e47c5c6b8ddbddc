// Lint: typescript-eslint's strict, type-aware rules, plus the layering rules
// of docs/architecture.md expressed as import restrictions per directory.
// Formatting is Prettier's job (eslint-config-prettier turns style rules off).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

/**
 * Import restrictions for one set of files. Each rule is `{ group }` (gitignore-style patterns) or
 * `{ regex }`, with the message shown on a violation; `allowTypeImports` lets `import type` through
 * (no code is loaded, so the layering of what runs holds).
 */
const forbid = (...rules) => ({ '@typescript-eslint/no-restricted-imports': ['error', { patterns: rules }] });

/** Relative import paths are all a rule sees: `depth` `../` from a file `depth` directories deep reach the root. */
const up = (depth) => `^(\\.\\./){${depth}}`;
/**
 * The .ts files of `dir` that lie `depth` directories below the root (src/x.ts: 1). Rules go per depth, so a
 * path that climbs exactly to the root names a top-level directory (`../../workflows/` from src/cases/ is the
 * Temporal layer), whatever a directory inside src is called.
 */
const filesAt = (dir, depth) => [`${dir}/${'*/'.repeat(depth - dir.split('/').length)}*.ts`];
const depths = [1, 2, 3, 4];

const http = {
  group: ['**/api/**', 'express', 'express-*', 'swagger-ui-express'],
  message: 'HTTP belongs to src/api: throw DomainError (src/errors.ts) and let the API map it.',
};
const temporalLayers = (depth) => ({
  regex: `${up(depth)}(activities|workflows)/`,
  message: 'src/ is imported by activities and workflows, never the other way; wire in the composition root.',
});
/** src/domain is the bottom: only itself, src/errors.ts and the Python runner's request/result types. */
const aboveDomain = (depth) => [
  {
    regex: `${up(depth - 1)}(?!errors\\.js$|python/types\\.js$)`,
    message: 'src/domain is the bottom layer: it imports only src/domain and src/errors.ts.',
  },
  {
    regex: `${up(depth - 1)}python/types\\.js$`,
    allowTypeImports: true,
    message: "src/domain names the Python runner's types (import type) and never loads it.",
  },
  {
    group: ['express', 'kysely', 'got', 'pg', 'better-sqlite3', '@temporalio/*', 'pino*', 'node:fs', 'node:net'],
    message: 'src/domain is pure: no I/O, no framework.',
  },
];
/** Entry points that assemble the layers: they may import anything. */
const srcEntryPoints = ['src/service.ts', 'src/cli/**', 'src/temporal/worker.ts'];

export default tseslint.config(
  // src/client/schema.d.ts is generated (npm run client:generate); its drift test keeps it true.
  { ignores: ['dist/**', 'node_modules/**', '.venv/**', 'coverage/**', 'src/client/schema.d.ts'] },
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
      // Test matchers (expect.objectContaining()) and HTTP response bodies arrive untyped by design.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  // Layering (docs/architecture.md): the domain, the store, services and the Python runner know nothing of
  // HTTP or Temporal's layers; the API knows nothing of Temporal's layers; the domain knows only itself.
  ...depths.map((depth) => ({
    files: filesAt('src', depth),
    ignores: ['src/api/**', 'src/domain/**', ...srcEntryPoints],
    rules: forbid(http, temporalLayers(depth)),
  })),
  // Routes and views reach the store through services; the record types they answer with are the domain's.
  ...depths.slice(1).map((depth) => ({
    files: filesAt('src/api', depth),
    rules: forbid(temporalLayers(depth), {
      group: ['**/store/**'],
      message: 'src/api reaches the store through the services (ctx.store for readiness); records are in src/domain.',
    }),
  })),
  // The store reads and writes: it names the domain's record types and src/errors.ts, never a service area.
  ...[2, 3].map((depth) => ({
    files: filesAt('src/store', depth),
    rules: forbid(http, temporalLayers(depth), {
      regex: `${up(depth - 1)}(?!domain/|errors\\.js$)`,
      message: 'src/store imports only src/domain and src/errors.ts: record types live in src/domain.',
    }),
  })),
  ...depths.slice(1).map((depth) => ({
    files: filesAt('src/domain', depth),
    rules: forbid(http, temporalLayers(depth), ...aboveDomain(depth)),
  })),
  // Workflow code is replayed and bundled: it loads only the domain and the workflows' contracts (no I/O, no
  // Node built-ins), and names activities by their types.
  {
    files: ['workflows/**/*.ts'],
    rules: forbid(
      {
        regex: '^\\.\\./activities/',
        allowTypeImports: true,
        message: 'Workflow code names activities by their types and calls them through proxies.',
      },
      {
        regex: '^\\.\\./(?!src/domain/|src/temporal/contracts/|activities/)',
        message: 'workflows/ imports only src/domain and src/temporal/contracts: move what it needs there.',
      },
      {
        regex: '^(?!\\.|@temporalio/(workflow|common)$)',
        message: 'Workflow code is deterministic: no package but @temporalio/workflow and @temporalio/common.',
      },
    ),
  },
  // A contract is bundled with the workflows and imported by services: it loads only src/domain and other
  // contracts, and names the types of other areas (import type).
  {
    files: ['src/temporal/contracts/*.ts'],
    rules: forbid(
      http,
      temporalLayers(3),
      {
        regex: '^\\.\\./(?!\\.\\./domain/)',
        allowTypeImports: true,
        message: 'A contract loads only src/domain and other contracts; import type for the rest.',
      },
      {
        regex: '^(?!\\.|@temporalio/(workflow|common)$)',
        allowTypeImports: true,
        message: 'A contract runs in the workflow sandbox: no package but @temporalio/workflow and @temporalio/common.',
      },
    ),
  },
  {
    files: ['activities/**/*.ts'],
    rules: forbid(
      { group: ['**/api/**', 'express'], message: 'Activities call services; HTTP belongs to src/api.' },
      // The top-level workflows/: Temporal workflow code (caseflow's workflow definitions are src/definitions).
      { regex: '^(\\.\\./)+workflows/', message: 'Activities do not import workflow code.' },
    ),
  },
  prettier,
);
