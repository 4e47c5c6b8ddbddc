import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createLogger, type Logger } from '../src/logging/logger.js';
import { freePort } from '../src/net/free-port.js';
import { temporalCliPath } from '../src/temporal/binaries.js';
import { startDevServer, type DevServer } from '../src/temporal/dev-server.js';
import type { Level, LoadJob } from './bench-e2e-load.js';
import { fillStores, type FillOptions } from './bench-fill.js';
import type { TenantJob } from './bench-fairness-load.js';
import { pythonAddGraph } from './bench-graph.js';
import { post } from './bench-http.js';
import type { Root } from './bench-proc.js';
import { spawnGroup, stopGroup } from './bench-process-group.js';

/**
 * What `npm run bench -- e2e` can measure, each started from nothing in a
 * temporary directory and stopped after:
 * - `caseflow`: `npm start` (one process, embedded Temporal dev server, SQLite);
 * - `caseflow-hook`: the same, driven through a sync webhook trigger instead of initiate → callback;
 * - `split`: a Temporal dev server of its own, `serve --role api` and two
 *   `serve --role worker` on Postgres (a fresh schema in BENCH_POSTGRES_URL);
 * - either of those `@<dir>`: the service built in another checkout (A/B in the same minutes);
 * - `n8n`: n8n (N8N_HOME, default /opt/n8n) with SQLite, webhook → JS Code → Respond;
 * - `n8n-queue`: the same in n8n's queue mode (one main, one worker, Postgres and Redis).
 */
export interface Subject {
  name: string;
  roots: Root[];
  /** The Temporal frontend the subject uses (caseflow subjects). */
  temporalAddress?: string;
  /** Its Prometheus endpoint (caseflow subjects), read for how its runs were started. */
  metricsUrl?: string;
  /** The embedded Temporal server's Prometheus endpoint (caseflow subjects; an older build's answers nowhere). */
  engineMetricsUrl?: string;
  /** The Temporal SDK runtime's own endpoint (served by its Rust threads, not the Node main thread). */
  workerMetricsUrl?: string;
  job(levels: Level[]): LoadJob;
  stop(): Promise<void>;
}

/** The build these scripts run from (dist/). */
export const distRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const n8nHome = process.env.N8N_HOME ?? '/opt/n8n';
const n8nBin = path.join(n8nHome, 'node_modules', '.bin', 'n8n');

export const n8nInstallHint = `n8n not found at ${n8nBin}: install it outside the repository with
  mkdir -p /opt/n8n && cd /opt/n8n && npm init -y && npm pkg set overrides.xlsx=0.18.5 &&
  npm_config_nodedir=/usr npm install n8n@2.8.4
(several minutes, 2.3 GB), or set N8N_HOME to the directory holding node_modules/.bin/n8n.`;

export function n8nInstalled(): boolean {
  return existsSync(n8nBin);
}

export async function waitFor(what: string, child: ChildProcess, ready: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 900; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} did not become ready in 180 s`);
}

export const answers = (url: string, init?: RequestInit) => () =>
  fetch(url, init).then(
    (r) => r.ok,
    () => false,
  );

/** A headless Temporal dev server of the bench's own under `dataDir`, persisted as `npm start` runs it. */
export function startBenchDevServer(dataDir: string, logger: Logger): Promise<DevServer> {
  return freePort().then((port) =>
    startDevServer({
      cliPath: temporalCliPath(process.env.TEMPORAL_CLI_PATH),
      dataDir: path.join(dataDir, 'temporal'),
      dbFilename: path.join(dataDir, 'temporal', 'temporal.db'),
      port,
      uiPort: 0,
      ui: false,
      namespace: 'default',
      startTimeoutMs: 120_000,
      logger,
    }),
  );
}

/**
 * The Node flags and environment (`env K=V … node`) `npm start` gives the service in `root`'s checkout (its
 * package.json), so the bench runs it as users do.
 */
function startCommand(root: string): { flags: string[]; env: Record<string, string> } {
  const pkg = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const start = pkg.scripts?.start ?? '';
  const flags = /\bnode((?: --\S+)*) dist\/src\/cli\/main\.js/.exec(start)?.[1] ?? '';
  const assignments = /\benv((?: \w+=\S+)+) node\b/.exec(start)?.[1] ?? '';
  const env = Object.fromEntries(
    assignments
      .split(' ')
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  return { flags: flags.split(' ').filter(Boolean), env };
}

/**
 * A caseflow process from `root`'s build: its pid, its bootstrap key once printed, its API once ready. Its log
 * (stdout) is read for the key only, and also written to `logFile` when given.
 */
export function startServe(
  root: string,
  role: 'all' | 'api' | 'worker',
  env: Record<string, string>,
  logFile?: string,
): { child: ChildProcess; key: Promise<string> } {
  const profileDir = process.env.BENCH_E2E_PROFILE_DIR;
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const start = startCommand(root);
  const child = spawnGroup(
    process.execPath,
    [...start.flags, ...profile, path.join(root, 'src', 'cli', 'main.js'), 'serve', '--role', role],
    {
      env: {
        ...process.env,
        ...start.env,
        LOG_LEVEL: 'warn',
        // The receiver is on loopback; a real one would be public.
        CASEFLOW_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const key = new Promise<string>((resolve) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (logFile) appendFileSync(logFile, `${line}\n`);
      const m = /CASEFLOW_API_KEY=(\S+)/.exec(line);
      if (m?.[1]) resolve(m[1]);
    });
  });
  return { child, key };
}

/** The benches' workflow (input → Python → output), created through the API, and the workspace's webhook secret. */
export async function caseJobOf(baseUrl: string, key: string): Promise<(levels: Level[]) => LoadJob> {
  const tenant = await benchTenantOf(baseUrl, key);
  return (levels) => ({ kind: 'case', ...tenant, levels });
}

/**
 * The benches' workflow behind a sync Standard Webhooks hook (the `caseflow-hook` subject): deliveries wait up to
 * `syncTimeoutMs` for the case's results, and the hook's rate limit is its highest, above any level's rate.
 */
export async function hookJobOf(
  baseUrl: string,
  key: string,
  syncTimeoutMs: number,
): Promise<(levels: Level[]) => LoadJob> {
  const { workflowId } = await benchTenantOf(baseUrl, key);
  const hook = (await post(
    `${baseUrl}/api/v1/workflow/${workflowId}/hooks`,
    { name: 'bench-e2e', scheme: 'standard-webhooks', mode: 'sync', syncTimeoutMs, rateLimitPerMinute: 100_000 },
    { 'x-service-key': key },
  )) as { url: string; secret: string };
  return (levels) => ({ kind: 'hook', url: hook.url, secret: hook.secret, levels });
}

/** The key's first workspace with the benches' workflow in it, and that workspace's webhook secret. */
export async function benchTenantOf(baseUrl: string, key: string): Promise<TenantJob> {
  const call = async (method: string, urlPath: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${baseUrl}${urlPath}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-service-key': key, ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, unknown>;
    if (r.status >= 300) throw new Error(`${method} ${urlPath} → ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  const me = (await call('GET', '/api/v1/me')) as { workspaces: Array<{ id: string }> };
  const workspaceId = me.workspaces[0]?.id ?? '';
  const wf = (await call(
    'POST',
    '/api/v1/workflow',
    { name: 'bench-e2e', activeStatus: 'active', ...pythonAddGraph() },
    { 'x-workspace-id': workspaceId },
  )) as { workflowId: string };
  const { secret } = (await call('GET', `/api/v1/workspace/${workspaceId}/webhook-secret`)) as { secret: string };
  return { baseUrl, key, workflowId: wf.workflowId, secret };
}

/** Where an embedded `npm start` on `dataDir` listens, and the environment that makes it do so. */
export interface EmbeddedLaunch {
  env: Record<string, string>;
  baseUrl: string;
  temporalAddress: string;
  engineMetricsUrl: string;
  workerMetricsUrl: string;
}

/** Free loopback ports for an embedded `npm start` on `dataDir`: the same launch starts it again on the same data. */
export async function embeddedLaunch(dataDir: string): Promise<EmbeddedLaunch> {
  const [port, temporalPort, uiPort, workerMetricsPort, engineMetricsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  return {
    env: {
      CASEFLOW_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      TEMPORAL_DEV_PORT: String(temporalPort),
      TEMPORAL_DEV_UI_PORT: String(uiPort),
      // The SDK's own metrics port, fixed by default: another service on this host may hold it.
      CASEFLOW_WORKER_METRICS_PORT: String(workerMetricsPort),
      TEMPORAL_DEV_METRICS_PORT: String(engineMetricsPort),
    },
    baseUrl: `http://127.0.0.1:${port}`,
    temporalAddress: `127.0.0.1:${temporalPort}`,
    engineMetricsUrl: `http://127.0.0.1:${engineMetricsPort}/metrics`,
    workerMetricsUrl: `http://127.0.0.1:${workerMetricsPort}/metrics`,
  };
}

/** Cases of `job` run to their callbacks by the load process, not measured (the fill's templates). */
async function runCases(job: LoadJob): Promise<void> {
  const load = spawn(process.execPath, [path.join(distRoot, 'scripts', 'bench-e2e-load.js')], {
    env: { ...process.env, BENCH_E2E_JOB: JSON.stringify(job) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const code = await new Promise<number | null>((resolve) => load.once('exit', resolve));
  if (code !== 0) throw new Error(`the fill's template cases: the load process exited with ${code}`);
}

/** The processes of an embedded caseflow: the one that embeds the Temporal dev server, and workers beside it. */
export interface EmbeddedTopology {
  /** `all` (`npm start`) or `api` (no worker of its own: every run goes to the workers). */
  role: 'all' | 'api';
  /** `serve --role worker` processes on the same data directory, store and dev server. */
  workers: number;
}

/** How a subject's load reaches its cases: set up once the service answers, with its bootstrap key. */
type JobOf = (baseUrl: string, key: string) => Promise<(levels: Level[]) => LoadJob>;

/**
 * `npm start` from the build in `root` (this checkout's dist by default), with `env` added to its
 * environment; with `fill`, on stores that already hold `fill.cases` cases of the last 24 h
 * (bench-fill.ts: 100 real cases, then copies; with `fill.deletingPerSecond`, their retention timers falling
 * due at that rate), started again on them. `topology` adds worker
 * processes beside it, or starts it as `--role api` (workers then run every case). `jobOf` sets up
 * what the load drives (initiate → callback by default).
 */
export async function startCaseflow(
  root = distRoot,
  env: Record<string, string> = {},
  fill: FillOptions = { cases: 0 },
  topology: EmbeddedTopology = { role: 'all', workers: 0 },
  jobOf: JobOf = caseJobOf,
): Promise<Subject> {
  if (topology.role === 'api' && topology.workers < 1) throw new Error('an api-only caseflow needs a worker beside it');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-e2e-'));
  const launch = await embeddedLaunch(dataDir);
  // Kept, with the service's log, for a look after a run that lost or stalled cases.
  const keep = process.env.BENCH_KEEP_DATA === '1';
  const logFile = keep ? path.join(dataDir, 'service.log') : undefined;
  const environment = { ...launch.env, ...env };
  const first = startServe(root, topology.role, environment, logFile);
  let child = first.child;
  const workers: ChildProcess[] = [];
  const stop = async () => {
    for (const worker of workers) await stopGroup(worker);
    await stopGroup(child);
    if (keep) console.error(`bench: the service's data directory ${dataDir} is kept`);
    else rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor('the service', child, answers(`${launch.baseUrl}/readyz`));
    const job = await jobOf(launch.baseUrl, await first.key);
    if (fill.cases > 0) {
      await runCases(job([{ concurrency: 8, cases: 100 }]));
      await stopGroup(child);
      const filled = fillStores(dataDir, fill);
      const perCase = (bytes: number) =>
        `${(bytes / 2 ** 20).toFixed(0)} MB, ${(bytes / filled.cases).toFixed(0)} B/case`;
      console.log(
        `e2e: filled the stores with ${filled.cases} cases in ${filled.seconds.toFixed(0)} s ` +
          `(${(filled.cases / filled.seconds).toFixed(0)} cases/s; indexes ${filled.indexSeconds.toFixed(0)} s): ` +
          `caseflow.db ${perCase(filled.bytes.caseflow)}, temporal.db ${perCase(filled.bytes.temporal)}` +
          (fill.deletingPerSecond ? `; ${fill.deletingPerSecond} runs/s fall due for deletion from now` : ''),
      );
      child = startServe(root, topology.role, environment, logFile).child;
      await waitFor('the service', child, answers(`${launch.baseUrl}/readyz`));
    }
    // Started once the first process has migrated the store and runs the dev server they connect to.
    // The SDK's metrics port off: the first process holds the launch's.
    const own = { TEMPORAL_ADDRESS: launch.temporalAddress, CASEFLOW_WORKER_METRICS_PORT: '0' };
    for (let i = 0; i < topology.workers; i++)
      workers.push(startServe(root, 'worker', { ...environment, ...own }, logFile).child);
    // The workers are ready when their first poll lands: give them the time `serve` needs to start.
    if (workers.length > 0) await new Promise((r) => setTimeout(r, 5000));
    return {
      name: 'caseflow',
      roots: [
        { pid: child.pid ?? 0, label: 'caseflow', kind: 'caseflow' },
        ...workers.map((w, i) => ({ pid: w.pid ?? 0, label: `worker ${i + 1}`, kind: 'caseflow' as const })),
      ],
      temporalAddress: launch.temporalAddress,
      metricsUrl: `${launch.baseUrl}/metrics`,
      engineMetricsUrl: launch.engineMetricsUrl,
      workerMetricsUrl: launch.workerMetricsUrl,
      job,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One statement on its own connection (schemas and databases the bench makes and drops). */
async function postgresAdmin(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** One Temporal server, `--role api` and two `--role worker` processes on a fresh Postgres schema. */
export async function startSplit(root = distRoot, adminUrl = postgresUrl): Promise<Subject> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-split-'));
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = (statement: string) => postgresAdmin(adminUrl, statement);
  await admin(`create schema ${schema}`);
  const databaseUrl = `${adminUrl}${adminUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const temporal = await startBenchDevServer(dataDir, createLogger('warn'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // One data dir for all three: the master key file and file storage are shared as on one host.
  const shared = { CASEFLOW_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address };
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopGroup(child);
    await temporal.stop();
    await admin(`drop schema ${schema} cascade`);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const api = startServe(root, 'api', { ...shared, HOST: '127.0.0.1', PORT: String(port) });
    children.push(api.child);
    await waitFor('the api process', api.child, answers(`${baseUrl}/readyz`));
    const job = await caseJobOf(baseUrl, await api.key);
    // Started after the api has migrated the store, so no two processes migrate at once.
    for (let i = 0; i < 2; i++) {
      const metricsPort = String(await freePort());
      children.push(startServe(root, 'worker', { ...shared, CASEFLOW_WORKER_METRICS_PORT: metricsPort }).child);
    }
    const roots: Root[] = [
      { pid: temporal.pid, label: 'temporal server', kind: 'other' },
      ...children.map((c, i) => ({
        pid: c.pid ?? 0,
        label: i === 0 ? 'api' : `worker ${i}`,
        kind: 'caseflow' as const,
      })),
    ];
    // The workers are ready when their first poll lands: give them the time `serve` needs to start.
    await new Promise((r) => setTimeout(r, 5000));
    return { name: 'split', roots, temporalAddress: temporal.address, job, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The same workflow in n8n: webhook → Code (JavaScript, a + b) → Respond to Webhook. */
function n8nWorkflow() {
  return [
    {
      id: 'benchAddWorkflow1',
      name: 'bench-add',
      active: false,
      nodes: [
        {
          id: 'a1',
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          webhookId: 'b3f1c1de-0000-4000-8000-000000000001',
          parameters: { httpMethod: 'POST', path: 'add', responseMode: 'responseNode', options: {} },
        },
        {
          id: 'a2',
          name: 'Add',
          type: 'n8n-nodes-base.code',
          typeVersion: 2,
          position: [200, 0],
          parameters: { jsCode: 'const b = $input.first().json.body;\nreturn [{ json: { sum: b.a + b.b } }];' },
        },
        {
          id: 'a3',
          name: 'Respond',
          type: 'n8n-nodes-base.respondToWebhook',
          typeVersion: 1.1,
          position: [400, 0],
          parameters: { respondWith: 'firstIncomingItem', options: {} },
        },
      ],
      connections: {
        Webhook: { main: [[{ node: 'Add', type: 'main', index: 0 }]] },
        Add: { main: [[{ node: 'Respond', type: 'main', index: 0 }]] },
      },
      settings: { executionOrder: 'v1' },
    },
  ];
}

/** The environment of an n8n process of the bench: its own user folder, ports on loopback, no telemetry. */
async function n8nEnv(home: string, extra: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  return {
    ...process.env,
    N8N_USER_FOLDER: home,
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    // Its task broker defaults to 5679, which another n8n (or a previous run) may hold.
    N8N_RUNNERS_BROKER_PORT: String(await freePort()),
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** A fresh Postgres database for n8n's queue mode, and how to drop it. */
async function n8nDatabase(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const name = `n8n_bench_${process.pid}_${Date.now()}`;
  const admin = (statement: string) => postgresAdmin(postgresUrl, statement);
  await admin(`create database ${name}`);
  const url = new URL(postgresUrl);
  return {
    env: {
      DB_TYPE: 'postgresdb',
      DB_POSTGRESDB_HOST: url.hostname,
      DB_POSTGRESDB_PORT: url.port || '5432',
      DB_POSTGRESDB_USER: decodeURIComponent(url.username),
      DB_POSTGRESDB_PASSWORD: decodeURIComponent(url.password),
      DB_POSTGRESDB_DATABASE: name,
    },
    drop: () => admin(`drop database ${name} with (force)`),
  };
}

/**
 * n8n with its defaults (SQLite, every execution saved) in a temporary user
 * folder, or (`queue`) as its docs recommend for production: one main and
 * one worker sharing Postgres (a fresh database in BENCH_POSTGRES_URL's
 * server) and Redis (BENCH_REDIS_HOST, default 127.0.0.1:6379, a queue
 * prefix of its own). Redis's and Postgres's own CPU is not in its figures:
 * they are the machine's shared services.
 */
export async function startN8n(mode: 'regular' | 'queue' = 'regular'): Promise<Subject> {
  if (!n8nInstalled()) throw new Error(n8nInstallHint);
  const home = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-n8n-'));
  const port = await freePort();
  const database = mode === 'queue' ? await n8nDatabase() : undefined;
  const [redisHost, redisPort] = (process.env.BENCH_REDIS_HOST ?? '127.0.0.1:6379').split(':');
  const queue = database
    ? {
        ...database.env,
        EXECUTIONS_MODE: 'queue',
        QUEUE_BULL_REDIS_HOST: redisHost ?? '127.0.0.1',
        QUEUE_BULL_REDIS_PORT: redisPort ?? '6379',
        QUEUE_BULL_PREFIX: `n8n-bench-${process.pid}-${Date.now()}`,
        // Its health ping (SELECT 1 through a pool of 2) gives up after 5 s and then answers every webhook 503
        // "Database is not ready!" until the next ping: on a loaded machine that stops the bench, not the work.
        N8N_DB_PING_TIMEOUT: '60000',
      }
    : {};
  const env = await n8nEnv(home, { N8N_PORT: String(port), ...queue });
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [n8nBin, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`n8n ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopGroup(child);
    await database?.drop();
    rmSync(home, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}/webhook/add`;
  try {
    const workflowFile = path.join(home, 'workflow.json');
    writeFileSync(workflowFile, JSON.stringify(n8nWorkflow()));
    cli('import:workflow', `--input=${workflowFile}`);
    cli('publish:workflow', '--id=benchAddWorkflow1');
    const spawnN8n = (args: string[], extra: Record<string, string>) => {
      const child = spawnGroup(process.execPath, [n8nBin, ...args], {
        env: { ...env, ...extra },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      children.push(child);
      return child;
    };
    const main = spawnN8n(['start'], {});
    if (database) {
      // Its own broker and health ports: the main holds the ones in `env`.
      spawnN8n(['worker'], {
        N8N_RUNNERS_BROKER_PORT: String(await freePort()),
        QUEUE_HEALTH_CHECK_PORT: String(await freePort()),
      });
    }
    const probe = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1,"b":1}' };
    await waitFor('n8n', main, answers(url, probe));
    return {
      name: database ? 'n8n-queue' : 'n8n',
      roots: children.map((c, i) => ({ pid: c.pid ?? 0, label: i === 0 ? 'n8n' : 'n8n worker', kind: 'other' })),
      job: (levels) => ({ kind: 'webhook', url, levels }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
