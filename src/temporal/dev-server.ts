import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../config/config.js';
import type { Logger } from '../logging/logger.js';
import { searchAttributeRegistrations } from './contracts/search-attributes.js';
import { pruneVisibilityIndexes } from './dev-server-visibility.js';

type DynamicConfigScalar = number | boolean | string;

export interface DevServerOptions {
  cliPath: string;
  dataDir: string;
  /** SQLite file for the server's own state; in-memory when absent. */
  dbFilename?: string;
  ip?: string;
  port: number;
  uiPort: number;
  /** Serve the Web UI (on uiPort) or not. */
  ui: boolean;
  /** The codec server the UI decodes payloads with (operators: the admin token guards it). */
  codecEndpoint?: string;
  namespace: string;
  startTimeoutMs: number;
  /** Dispatch tasks fairly across fairness keys (organizations) instead of first in, first out. */
  fairness?: boolean;
  logger: Logger;
  /** `--dynamic-config-value key=JSON` for each entry (docs/performance.md); an object for a setting read as a struct. */
  dynamicConfig?: Record<string, DynamicConfigScalar | Record<string, DynamicConfigScalar>>;
  /** `--sqlite-pragma` beside the fixed journal_mode=wal and synchronous=normal (with dbFilename). */
  sqlitePragmas?: Record<string, number | string>;
  /** GOGC in the server's environment. */
  goGc?: number;
  /** `--metrics-port`: the server's Prometheus endpoint (a random port when absent). */
  metricsPort?: number;
  /** Drop the visibility indexes no caseflow list needs (with dbFilename; dev-server-visibility.ts). */
  leanVisibility?: boolean;
}

/**
 * The engine's settings in the configuration (temporal.devServer: fairness, dynamic config, SQLite pragmas, GOGC,
 * lean visibility), as the service's server starts with them; the tests' server starts with the same, so tests run
 * the engine as users do. The pragmas and lean visibility apply to a server with a database file.
 */
export function devServerEngine(
  dev: Config['temporal']['devServer'],
): Pick<DevServerOptions, 'fairness' | 'dynamicConfig' | 'sqlitePragmas' | 'goGc' | 'leanVisibility'> {
  const { fairness, dynamicConfig, sqlitePragmas, goGc, leanVisibility } = dev;
  return { fairness, dynamicConfig, sqlitePragmas, goGc, leanVisibility };
}

/**
 * The server's task-queue fairness (off by default in server 1.32): within one priority, tasks are
 * dispatched in proportion to their fairness key's weight, so one organization's backlog does not
 * hold another's tasks behind it. Case runs carry their organization as the key (`tenantPriority`).
 * Each partition of a task queue balances on its own, so new tasks all go to one partition (one
 * server has no use for more); polls of the others are forwarded to it, and the others still
 * drain what an earlier start left in them.
 */
const fairnessConfig = [
  'matching.useNewMatcher=true',
  'matching.enableFairness=true',
  'matching.numTaskqueueWritePartitions=1',
];

/**
 * Pollers are spread over a task queue's read partitions (four by default), and each partition a poll
 * reaches loads its matcher, reader, writer and backlog: ~10 MB of the server's memory for the three that
 * fairness writes no task to (docs/performance.md, thirteenth round). A database whose every start ran
 * with fairness holds tasks in partition 0 only, so it is read from that one alone; one that ran without
 * fairness, or was made before this marker beside it, keeps four, so that the tasks left in the others
 * are still handed out.
 */
const onePartitionConfig = 'matching.numTaskqueueReadPartitions=1';

/** Whether every task the server's database ever held went to partition 0; keeps the marker saying so. */
function tasksInOnePartition(options: DevServerOptions): boolean {
  if (!options.dbFilename) return options.fairness === true;
  const marker = `${options.dbFilename}.one-partition`;
  if (!options.fairness) rmSync(marker, { force: true });
  else if (!existsSync(options.dbFilename)) writeFileSync(marker, 'every start of this database ran with fairness\n');
  return options.fairness === true && existsSync(marker);
}

export interface DevServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when stop() ended it, false when it died by itself. */
  stopped: boolean;
}

export interface DevServer {
  address: string;
  uiUrl?: string;
  pid: number;
  /** Settles when the process has exited, for whatever reason. */
  exited: Promise<DevServerExit>;
  stop(): Promise<void>;
}

/**
 * Runs `temporal server start-dev` as a child process and waits until it
 * answers. A pid file in the data directory lets the next start clear a
 * server orphaned by a killed parent, since two servers must never share one
 * database file.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  mkdirSync(options.dataDir, { recursive: true });
  const pidFile = path.join(options.dataDir, 'temporal-dev-server.pid');
  await killOrphan(pidFile, options.logger);
  const { dbFilename } = options;
  // Before the first start below makes the database file.
  const onePartition = tasksInOnePartition(options);
  if (dbFilename && options.leanVisibility) {
    // The server creates its schema on its first start only, and the indexes go while no server has
    // the file open: a first start runs it once, headless, to create the file. It is killed, not
    // stopped (a graceful stop takes seconds): nothing ran on it, and what it wrote is in the WAL.
    if (!existsSync(dbFilename)) await (await launch({ ...options, ui: false }, pidFile, onePartition)).kill();
    const dropped = pruneVisibilityIndexes(dbFilename);
    if (dropped.length > 0) options.logger.info({ dropped: dropped.length }, 'unused visibility indexes dropped');
  }
  return launch(options, pidFile, onePartition);
}

/** A server as launched: a first start's preparatory run is killed rather than stopped. */
interface LaunchedServer extends DevServer {
  kill(): Promise<void>;
}

async function launch(options: DevServerOptions, pidFile: string, onePartition: boolean): Promise<LaunchedServer> {
  const ip = options.ip ?? '127.0.0.1';
  const args = [
    'server',
    'start-dev',
    '--ip',
    ip,
    '--port',
    String(options.port),
    '--namespace',
    options.namespace,
    '--log-level',
    'error',
    '--log-format',
    'json',
  ];
  if (options.dbFilename) {
    // WAL with NORMAL sync: no fsync per history write, still crash-consistent;
    // the same trade the service's own SQLite store makes.
    args.push(
      '--db-filename',
      options.dbFilename,
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
    );
    for (const [name, value] of Object.entries(options.sqlitePragmas ?? {})) {
      args.push('--sqlite-pragma', `${name}=${value}`);
    }
  }
  if (options.metricsPort !== undefined) args.push('--metrics-port', String(options.metricsPort));
  for (const [key, value] of Object.entries(options.dynamicConfig ?? {})) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  // The UI's news feed would reach out to the internet on every page load.
  if (options.ui) args.push('--ui-port', String(options.uiPort), '--ui-disable-news-fetch');
  else args.push('--headless');
  if (options.ui && options.codecEndpoint) args.push('--ui-codec-endpoint', options.codecEndpoint);
  for (const registration of searchAttributeRegistrations()) args.push('--search-attribute', registration);
  if (options.fairness) for (const value of fairnessConfig) args.push('--dynamic-config-value', value);
  if (onePartition) args.push('--dynamic-config-value', onePartitionConfig);
  const env = options.goGc === undefined ? process.env : { ...process.env, GOGC: String(options.goGc) };
  const child = spawn(options.cliPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  if (child.pid === undefined) throw new Error(`could not start ${options.cliPath}`);
  writeFileSync(pidFile, String(child.pid));
  const log = options.logger.child({ component: 'temporal-dev-server', pid: child.pid });
  let stopping = false;
  forwardServerLog(child.stdout, log, 'info', () => stopping);
  forwardServerLog(child.stderr, log, 'warn', () => stopping);
  let exited = false;
  const exitInfo = new Promise<DevServerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      if (stopping) log.info({ code, signal }, 'temporal dev server stopped');
      else log.error({ code, signal }, 'temporal dev server exited unexpectedly');
      resolve({ code, signal, stopped: stopping });
    });
  });

  const address = `${ip}:${options.port}`;
  try {
    await waitUntilServing(address, options.startTimeoutMs, () => exited);
  } catch (err) {
    await stopChild(child);
    rmSync(pidFile, { force: true });
    throw err;
  }
  log.info({ address, ui: options.ui ? `http://${ip}:${options.uiPort}` : undefined }, 'temporal dev server ready');
  return {
    address,
    uiUrl: options.ui ? `http://${ip === '0.0.0.0' ? 'localhost' : ip}:${options.uiPort}` : undefined,
    pid: child.pid,
    exited: exitInfo,
    stop: async () => {
      stopping = true;
      await stopChild(child);
      rmSync(pidFile, { force: true });
    },
    kill: async () => {
      stopping = true;
      child.kill('SIGKILL');
      await exitInfo;
      rmSync(pidFile, { force: true });
    },
  };
}

const serverLevels: Record<string, 'debug' | 'info' | 'warn' | 'error'> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Re-logs the server's JSON lines as our own events (its message, its level,
 * its fields under `temporal`). While we stop it, its complaints about
 * cancelled polls are expected and only shown at debug level.
 */
function forwardServerLog(
  stream: Readable | null,
  log: Logger,
  fallback: 'info' | 'warn',
  stopping: () => boolean,
): void {
  if (!stream) return;
  createInterface({ input: stream }).on('line', (line) => {
    if (!line.trim()) return;
    let parsed: Record<string, unknown> | undefined;
    try {
      const value: unknown = JSON.parse(line);
      if (value && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      parsed = undefined;
    }
    if (!parsed) {
      log[stopping() ? 'debug' : fallback]({ line }, 'temporal dev server output');
      return;
    }
    const { msg, level, time: _time, ...fields } = parsed;
    const mapped = serverLevels[String(level)] ?? fallback;
    log[stopping() ? 'debug' : mapped](
      { temporal: fields },
      `temporal server: ${typeof msg === 'string' ? msg : 'log line'}`,
    );
  });
}

async function waitUntilServing(address: string, timeoutMs: number, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('temporal dev server exited during start (is the port in use?)');
    try {
      const connection = await NativeConnection.connect({ address });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch (err) {
      lastError = err;
      await delay(250);
    }
  }
  throw new Error(`temporal dev server did not answer at ${address} within ${timeoutMs} ms: ${String(lastError)}`);
}

/** SIGTERM, then SIGKILL after 10 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function killOrphan(pidFile: string, logger: Logger): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 0) return;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return; // not running
  }
  if (cmdline.includes('start-dev')) {
    logger.warn({ pid }, 'stopping a temporal dev server left over from a previous run');
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 50 && existsSync(`/proc/${pid}`); i++) await delay(100);
  }
}
