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
import { startDevServer, stopChild, type DevServer } from '../src/temporal/dev-server.js';
import type { Level, LoadJob } from './bench-e2e-load.js';
import type { TenantJob } from './bench-fairness-load.js';
import { pythonAddGraph } from './bench-graph.js';
import type { Root } from './bench-proc.js';

/**
 * What `npm run bench -- e2e` can measure, each started from nothing in a
 * temporary directory and stopped after:
 * - `caseflow`: `npm start` (one process, embedded Temporal dev server, SQLite);
 * - `split`: a Temporal dev server of its own, `serve --role api` and two
 *   `serve --role worker` on Postgres (a fresh schema in BENCH_POSTGRES_URL);
 * - either of those `@<dir>`: the service built in another checkout (A/B in the same minutes);
 * - `n8n`: n8n (N8N_HOME, default /opt/n8n) with SQLite, webhook → JS Code → Respond.
 */
export interface Subject {
  name: string;
  roots: Root[];
  /** The Temporal frontend the subject uses (caseflow subjects). */
  temporalAddress?: string;
  /** Its Prometheus endpoint (caseflow subjects), read for how its runs were started. */
  metricsUrl?: string;
  job(levels: Level[]): LoadJob;
  stop(): Promise<void>;
}

/** The build these scripts run from (dist/). */
export const distRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const n8nHome = process.env.N8N_HOME ?? '/opt/n8n';
const n8nBin = path.join(n8nHome, 'node_modules', '.bin', 'n8n');

export const n8nInstallHint = `n8n not found at ${n8nBin}: install it outside the repository with
  mkdir -p /opt/n8n && cd /opt/n8n && npm init -y && npm pkg set overrides.xlsx=0.18.5 && npm install n8n@2.8.4
(about 6 minutes, 2.3 GB), or set N8N_HOME to the directory holding node_modules/.bin/n8n.`;

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

/** The Node flags `npm start` gives the service in `root`'s checkout (its package.json), so the bench runs it as users do. */
function startFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, '..', 'package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const flags = /\bnode((?: --\S+)*) dist\/src\/cli\/main\.js/.exec(pkg.scripts?.start ?? '')?.[1] ?? '';
  return flags.split(' ').filter(Boolean);
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
  const child = spawn(
    process.execPath,
    [...startFlags(root), ...profile, path.join(root, 'src', 'cli', 'main.js'), 'serve', '--role', role],
    {
      env: {
        ...process.env,
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
}

/** Free loopback ports for an embedded `npm start` on `dataDir`: the same launch starts it again on the same data. */
export async function embeddedLaunch(dataDir: string): Promise<EmbeddedLaunch> {
  const [port, temporalPort, uiPort, workerMetricsPort] = [
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
    },
    baseUrl: `http://127.0.0.1:${port}`,
    temporalAddress: `127.0.0.1:${temporalPort}`,
  };
}

/** `npm start` from the build in `root` (this checkout's dist by default), with `env` added to its environment. */
export async function startCaseflow(root = distRoot, env: Record<string, string> = {}): Promise<Subject> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-e2e-'));
  const launch = await embeddedLaunch(dataDir);
  // Kept, with the service's log, for a look after a run that lost or stalled cases.
  const keep = process.env.BENCH_KEEP_DATA === '1';
  const { child, key } = startServe(
    root,
    'all',
    { ...launch.env, ...env },
    keep ? path.join(dataDir, 'service.log') : undefined,
  );
  const stop = async () => {
    await stopChild(child);
    if (keep) console.error(`bench: the service's data directory ${dataDir} is kept`);
    else rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor('the service', child, answers(`${launch.baseUrl}/readyz`));
    const job = await caseJobOf(launch.baseUrl, await key);
    return {
      name: 'caseflow',
      roots: [{ pid: child.pid ?? 0, label: 'caseflow', kind: 'caseflow' }],
      temporalAddress: launch.temporalAddress,
      metricsUrl: `${launch.baseUrl}/metrics`,
      job,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** One Temporal server, `--role api` and two `--role worker` processes on a fresh Postgres schema. */
export async function startSplit(root = distRoot, adminUrl = postgresUrl): Promise<Subject> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-split-'));
  const schema = `bench_${process.pid}_${Date.now()}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  await admin(`create schema ${schema}`);
  const databaseUrl = `${adminUrl}${adminUrl.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const temporal = await startBenchDevServer(dataDir, createLogger('warn'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  // One data dir for all three: the master key file and file storage are shared as on one host.
  const shared = { CASEFLOW_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address };
  const children: ChildProcess[] = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopChild(child);
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

/** n8n with its defaults (SQLite, every execution saved) in a temporary user folder. */
export async function startN8n(): Promise<Subject> {
  if (!n8nInstalled()) throw new Error(n8nInstallHint);
  const home = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bench-n8n-'));
  const port = await freePort();
  const env = {
    ...process.env,
    N8N_USER_FOLDER: home,
    N8N_PORT: String(port),
    N8N_LISTEN_ADDRESS: '127.0.0.1',
    // Its task broker defaults to 5679, which another n8n (or a previous run) may hold.
    N8N_RUNNERS_BROKER_PORT: String(await freePort()),
    N8N_DIAGNOSTICS_ENABLED: 'false',
    N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
    N8N_LOG_LEVEL: 'warn',
  };
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [n8nBin, ...args], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`n8n ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  const workflowFile = path.join(home, 'workflow.json');
  writeFileSync(workflowFile, JSON.stringify(n8nWorkflow()));
  cli('import:workflow', `--input=${workflowFile}`);
  cli('publish:workflow', '--id=benchAddWorkflow1');
  const child = spawn(process.execPath, [n8nBin, 'start'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  const stop = async () => {
    await stopChild(child);
    rmSync(home, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}/webhook/add`;
  try {
    const probe = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1,"b":1}' };
    await waitFor('n8n', child, answers(url, probe));
    return {
      name: 'n8n',
      roots: [{ pid: child.pid ?? 0, label: 'n8n', kind: 'other' }],
      job: (levels) => ({ kind: 'webhook', url, levels }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
