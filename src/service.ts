import { mkdirSync } from 'node:fs';
import type { Express } from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DefaultLogger, Runtime, type Worker, type LogLevel } from '@temporalio/worker';
import { IllegalStateError } from '@temporalio/common';
import { listenUrl, type Config } from './config/config.js';
import type { Logger } from './logging/logger.js';
import { createApp } from './api/app.js';
import { createMetricsApp } from './api/metrics-endpoint.js';
import { temporalCodecEndpoint } from './api/temporal-codec.routes.js';
import { wire } from './composition.js';
import type { AppContext } from './context.js';
import { createMetrics } from './metrics/metrics.js';
import { watchEngine } from './metrics/engine-metrics.js';
import { migrateToLatest, openStore } from './store/database.js';
import { describeBuildWait } from './domain/index-build-waits.js';
import type { BootstrapResult } from './tenancy/tenancy-service.js';
import { temporalCliPath } from './temporal/binaries.js';
import { connectTemporal } from './temporal/connection.js';
import { superviseDevServer, type SupervisedDevServer } from './temporal/dev-server-supervisor.js';
import { devServerEngine } from './temporal/dev-server.js';
import { EngineHealth, startEngineProbe } from './temporal/engine-health.js';
import { countLocalActivityReruns } from './temporal/local-activity-reruns.js';
import { createWorker } from './temporal/worker.js';
import { superviseWorker } from './temporal/worker-supervisor.js';
import { configuredPoolOptions, PythonRunnerPool } from './python/pool.js';
import { tracingSettings, type TracingSettings } from './tracing/settings.js';
import { startTracing } from './tracing/tracing.js';

/** Room for the longest query the document allows, each character percent-encoded as 4 UTF-8 bytes. */
const maxRequestHeadBytes = 64 * 1024;

export type Role = 'api' | 'worker' | 'all';

export interface ServiceOptions {
  config: Config;
  logger: Logger;
  role: Role;
  /** Called once with the default key when the store was empty. */
  onBootstrap?: (result: BootstrapResult) => void;
  /** Where spans go; read from the OTEL_* variables of the environment when not given (off without an endpoint). */
  tracing?: TracingSettings;
}

export interface RunningService {
  /** Base URL of the API when this process serves it. */
  url?: string;
  /** Base URL of the metrics listener when `metrics.port` is configured. */
  metricsUrl?: string;
  context: AppContext;
  /** The worker running now (a new one replaces a worker that failed). */
  worker?: () => Worker;
  devServer?: SupervisedDevServer;
  engine: EngineHealth;
  stop(): Promise<void>;
}

let runtimeInstalled = false;

/**
 * Temporal's core runtime logs through our logger and serves worker metrics on a private port. Installed in
 * every role, since a NativeConnection would otherwise install the default one, whose own SIGTERM/SIGINT
 * handlers begin shutting the worker down behind our back (and make our orderly stop log errors).
 */
function installTemporalRuntime(config: Config, logger: Logger, role: Role): string | undefined {
  if (runtimeInstalled) return undefined;
  runtimeInstalled = true;
  const port = role === 'api' ? 0 : config.temporal.workerMetricsPort;
  const log = logger.child({ component: 'temporal' });
  const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
    TRACE: 'trace',
    DEBUG: 'debug',
    INFO: 'info',
    WARN: 'warn',
    ERROR: 'error',
  };
  try {
    Runtime.install({
      logger: new DefaultLogger('WARN', (entry) => log[levels[entry.level]](entry.meta ?? {}, entry.message)),
      shutdownSignals: [],
      telemetryOptions: port > 0 ? { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}` } } } : undefined,
    });
  } catch (err) {
    // Something in this process made a runtime first (a test environment); the service works on it as it is.
    if (!(err instanceof IllegalStateError)) throw err;
    logger.warn('the Temporal runtime was already created: its own logger and signal handling stay in force');
    return undefined;
  }
  return port > 0 ? `http://127.0.0.1:${port}/metrics` : undefined;
}

/**
 * Starts what this process runs: the embedded Temporal dev server when no
 * TEMPORAL_ADDRESS is set, the store (migrated), the API, the worker.
 * stop() drains in the reverse order.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger, role } = options;
  mkdirSync(config.dataDir, { recursive: true });
  const workerMetricsUrl = installTemporalRuntime(config, logger, role);
  const engine = new EngineHealth();
  // Timers stop synchronously; everything else is awaited in reverse order of start.
  const stops: Array<() => Promise<void> | void> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        logger.error({ err }, 'error during shutdown');
      }
    }
  };

  try {
    // First: the client and the worker are built with its interceptors.
    const tracing = await startTracing('tracing' in options ? options.tracing : tracingSettings(process.env));
    // Pushed first, so it runs last: the spans of the stop's last requests and activities are sent too.
    stops.push(() => tracing.shutdown());
    if (tracing.enabled) logger.info('traces exported over OTLP/HTTP');

    let address = config.temporal.address;
    let devServer: SupervisedDevServer | undefined;
    if (!address) {
      const dev = config.temporal.devServer;
      const started = await superviseDevServer(
        {
          cliPath: temporalCliPath(config.temporal.cliPath),
          dataDir: config.dataDir,
          dbFilename: path.join(config.dataDir, 'temporal.db'),
          port: dev.port,
          uiPort: dev.uiPort,
          ui: true,
          codecEndpoint: temporalCodecEndpoint(config),
          namespace: config.temporal.namespace,
          startTimeoutMs: dev.startTimeoutMs,
          logger,
          metricsPort: dev.metricsPort,
          ...devServerEngine(dev),
        },
        {
          maxRestarts: dev.maxRestarts,
          windowMs: dev.restartWindowMs,
          initialBackoffMs: 200,
          maxBackoffMs: 10_000,
        },
        engine,
      );
      devServer = started;
      stops.push(() => started.stop());
      address = started.address;
    }

    const store = openStore(config.dataDir, config.databaseUrl, (err) =>
      logger.warn({ err }, 'a database connection was lost; the pool reconnects'),
    );
    stops.push(() => store.close());
    const applied = await migrateToLatest(store.db, {
      onWaitingForMigrations: () =>
        logger.warn("waiting for another process to finish migrating the store (it holds the store's write lock)"),
      onWaitingForBuild: (index, on) => logger.warn({ index }, describeBuildWait(index, on)),
    });
    logger.info({ store: store.location, dialect: store.dialect, applied }, 'store ready');

    const temporal = await connectTemporal(config, address, devServer?.uiUrl, tracing.clientInterceptors);
    stops.push(() => temporal.connection.close());
    stops.push(
      startEngineProbe(temporal.connection, engine, {
        intervalMs: config.temporal.probeIntervalMs,
        timeoutMs: config.temporal.probeTimeoutMs,
      }),
    );
    const metrics = createMetrics(workerMetricsUrl);
    watchEngine(metrics.registry, engine);
    const python = await PythonRunnerPool.create({
      ...configuredPoolOptions(config.python),
      // Python egress obeys the same operator allowlist as every other tenant-supplied destination.
      egress: config.outbound,
      metricsRegistry: metrics.registry,
      logger: logger.child({ component: 'python' }),
    });
    stops.push(() => python.close());
    metrics.watchPythonPool(() => python.stats());
    const { services } = wire({ config, logger, store, temporal, python, metrics, engine, tracing });
    const bootstrap = await services.tenancy.bootstrap();
    if (bootstrap) options.onBootstrap?.(bootstrap);
    const context: AppContext = { config, logger, store, temporal, python, metrics, services, engine, tracing };

    let worker: (() => Worker) | undefined;
    if (role !== 'api') {
      // Its loop carries the runs: every process's fair share reads it from the store. Pushed before the worker's
      // stop, so the row goes only once the worker has drained.
      if (config.cases.fairShare.enabled) stops.push(services.caseWorkLoad.publish());
      // Made once: a restarted worker counts on in the same metric.
      const localActivityReruns = countLocalActivityReruns(metrics.registry);
      const supervised = await superviseWorker(
        () =>
          createWorker(
            temporal,
            { config, logger, python, services, tracing },
            {
              maxCachedWorkflows: config.temporal.maxCachedWorkflows,
              shutdownGraceMs: config.shutdownGraceMs,
              tracing: tracing.workerOptions,
              workflowTaskSlots: config.temporal.workflowTaskSlots,
              activityInterceptors: [localActivityReruns],
            },
          ),
        logger,
      );
      worker = () => supervised.current();
      stops.push(() => supervised.stop());
      // The schedule lives in Temporal: every worker start makes sure it exists with the configured interval.
      await services.retention
        .ensureSchedule()
        .catch((err: unknown) => logger.error({ err }, 'retention schedule could not be set up'));
      logger.info({ taskQueue: temporal.taskQueue }, 'worker running');
    }

    let url: string | undefined;
    if (role !== 'worker') {
      // A kill between accepting an execute and starting its run must not lose the case.
      const resume = () => {
        services.cases
          .resumeUnstarted(config.cases.resumeUnstartedAfterMs)
          .catch((err: unknown) => logger.error({ err }, 'case recovery failed'));
      };
      resume();
      engine.onUp(resume);
      const recovery = setInterval(resume, Math.max(500, config.cases.resumeUnstartedAfterMs / 2));
      recovery.unref();
      stops.push(clearing(recovery));

      // Slots freed without a case ending here (a person's wait, a raised cap, a process that died) go to queued cases.
      let admitting = false;
      const admit = setInterval(() => {
        if (admitting || !engine.isUp()) return;
        admitting = true;
        services.cases
          .dispatchQueued()
          .catch((err: unknown) => logger.error({ err }, 'queued cases could not be dispatched'))
          .finally(() => (admitting = false));
      }, config.cases.admissionIntervalMs);
      admit.unref();
      stops.push(clearing(admit));

      // A run that ended without writing its case (store down, terminated) must not leave it RUNNING.
      stops.push(
        everyPass(
          () => services.caseReconciler.reconcile(),
          config.cases.reconcileIntervalMs,
          engine,
          (err) => logger.error({ err }, 'case reconciliation failed'),
        ),
      );
      // A delivery written but never started (a process killed between the two, Temporal refusing) is not lost.
      stops.push(
        everyPass(
          () => services.deliverySweep.sweep(),
          config.callbacks.sweepIntervalMs,
          engine,
          (err) => logger.error({ err }, 'the delivery sweep failed'),
        ),
      );

      // Uploads a crashed process left in 'receiving' are released at start and every minute.
      const cleanUploads = () => {
        services.files.cleanUpStuckUploads().catch((err: unknown) => logger.error({ err }, 'upload cleanup failed'));
      };
      cleanUploads();
      const uploadCleanup = setInterval(cleanUploads, 60_000);
      uploadCleanup.unref();
      stops.push(clearing(uploadCleanup));

      const { app } = createApp(context);
      const server = await listen(app, config.port, config.host);
      url = listenUrl(config.host, (server.address() as AddressInfo).port);
      // Without a configured public URL, file URLs use the address actually bound (port 0 picks one), never a Host header.
      config.publicUrl ??= url;
      stops.push(() => closeServer(server, config.shutdownGraceMs));
      logger.info({ url, temporalUi: temporal.uiUrl }, 'API listening');
    }

    // Any role: a worker-only process has metrics (its Python pool, its Temporal worker) too.
    let metricsUrl: string | undefined;
    if (config.metrics.port !== undefined) {
      const server = await listen(createMetricsApp(context), config.metrics.port, config.metrics.host);
      metricsUrl = listenUrl(config.metrics.host, (server.address() as AddressInfo).port);
      stops.push(() => closeServer(server, config.shutdownGraceMs));
      logger.info({ url: `${metricsUrl}/metrics`, token: config.metrics.token !== undefined }, 'metrics listening');
    }

    return { url, metricsUrl, context, worker, devServer, engine, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function listen(app: Express, port: number, host: string): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    // Node's default 16 KB request head would answer 431 to a URL whose query the API refuses with a 400 itself.
    const server = createServer({ maxHeaderSize: maxRequestHeadBytes }, app).listen(port, host, () => resolve(server));
    server.once('error', reject);
  });
}

/**
 * Runs `pass` every `intervalMs`: a slow pass is not overlapped by the next, and none runs while the engine cannot
 * answer. The stop step it returns waits for a pass under way, so one between a case's end and its deliveries' start
 * finishes before the engine's connection closes.
 */
function everyPass(
  pass: () => Promise<unknown>,
  intervalMs: number,
  engine: EngineHealth,
  onError: (err: unknown) => void,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running || !engine.isUp()) return;
    running = pass()
      .then(() => undefined, onError)
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

/** A stop step that clears an interval. */
function clearing(timer: NodeJS.Timeout): () => Promise<void> {
  return () => {
    clearInterval(timer);
    return Promise.resolve();
  };
}

/** Stops accepting, lets in-flight requests finish, then drops what is left after the grace period. */
function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    server.closeIdleConnections();
  });
}
