import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { CidrList } from '../net/address-ranges.js';
import { TargetList } from '../net/allowed-targets.js';
import { keyValues } from './key-values.js';
import { projectRoot } from './paths.js';
import { maxCallDepthBound } from '../domain/cases.js';

const port = z.coerce.number().int().min(0).max(65535);
const bool = z.preprocess(
  (v) => (typeof v === 'string' ? ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()) : v),
  z.boolean(),
);

const jsonScalar = z.union([z.number(), z.boolean(), z.string()]);
/** A scalar, or a flat object of them for a setting the server reads as a struct (`history.cacheBackgroundEvict`). */
const dynamicConfigValue = z.union([jsonScalar, z.record(z.string().regex(/^\w+$/), jsonScalar)]);

/** A comma-separated list that `parse` reads (and throws on when malformed). */
const listOf = (parse: (value: string) => unknown, message: string) =>
  z.string().refine((v) => {
    try {
      parse(v);
      return true;
    } catch {
      return false;
    }
  }, message);

/**
 * Built where the configuration is read, not at import: its ~2.5 MB of zod objects are garbage once it has been
 * (docs/performance.md, "Twelfth round").
 */
const configSchema = () =>
  z.object({
    dataDir: z.string().min(1),
    host: z.string().min(1),
    port,
    publicUrl: z.url().optional(),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /** auto: readable lines when stdout is a terminal, JSON otherwise (log shippers). */
    logFormat: z.enum(['auto', 'json', 'pretty']),
    bodyLimit: z.string().regex(/^\d+(b|kb|mb)$/i, 'a size such as 512kb or 2mb'),
    shutdownGraceMs: z.coerce.number().int().min(0),
    /** How long a successful API key lookup is reused (0: never); revocation elsewhere takes effect within it. */
    keyCacheMs: z.coerce.number().int().min(0).max(1000),
    databaseUrl: z
      .string()
      .regex(/^(postgres(ql)?|sqlite):\/\//, 'a postgres://… or sqlite://… URL')
      .optional(),
    adminToken: z.string().min(16, 'at least 16 characters').optional(),
    /** Who may read /metrics (docs/running.md#metrics). */
    metrics: z.object({
      /** A bearer token /metrics requires; unset, whoever reaches its port reads it. */
      token: z.string().min(16, 'at least 16 characters').optional(),
      /** Serve /metrics on a listener of its own (0 picks a free port) instead of the API port. */
      port: port.optional(),
      /** The address of that listener. */
      host: z.string().min(1),
    }),
    temporal: z
      .object({
        address: z
          .string()
          .regex(/^[^:\s]+:\d+$/, 'host:port')
          .optional(),
        namespace: z.string().min(1),
        taskQueue: z.string().min(1),
        apiKey: z.string().min(1).optional(),
        tls: bool.optional(),
        tlsCertPath: z.string().optional(),
        tlsKeyPath: z.string().optional(),
        tlsCaPath: z.string().optional(),
        tlsServerName: z.string().optional(),
        cliPath: z.string().optional(),
        uiUrl: z.url().optional(),
        /** Tenants' answers link to uiUrl: only for a UI that enforces access (the embedded one has none). */
        tenantsMayUseUi: bool,
        devServer: z.object({
          port,
          uiPort: port,
          startTimeoutMs: z.coerce.number().int().min(1000),
          /** Restarts of a server that died allowed within restartWindowMs; past them liveness fails. */
          maxRestarts: z.coerce.number().int().min(0),
          restartWindowMs: z.coerce.number().int().min(1000),
          /** Task-queue fairness across organizations (the server's matching.enableFairness); see docs/performance.md#fairness. */
          fairness: bool,
          /** `--dynamic-config-value` pairs (docs/performance.md); an env value is `key=json,key=json`. */
          dynamicConfig: z.preprocess(keyValues, z.record(z.string().regex(/^[\w.]+$/), dynamicConfigValue)),
          /** `--sqlite-pragma` pairs beside journal_mode=wal and synchronous=normal, which are fixed (durability). */
          sqlitePragmas: z.preprocess(
            keyValues,
            z.partialRecord(
              z.enum(['cache_size', 'mmap_size', 'temp_store', 'busy_timeout', 'wal_autocheckpoint']),
              z.union([z.number(), z.string().regex(/^\w+$/)]),
            ),
          ),
          /** The Go runtime's GOGC for the server (its GC CPU against its heap after bursts): config/default.json's 50. */
          goGc: z.coerce.number().int().min(25).max(10_000).optional(),
          /** The server's own Prometheus `/metrics` port (its task timeouts, eager-start refusals); unset, a random one. */
          metricsPort: port.optional(),
          /** Drop the SQLite visibility indexes no caseflow list needs (src/temporal/dev-server-visibility.ts). */
          leanVisibility: bool,
        }),
        maxCachedWorkflows: z.coerce.number().int().min(0),
        /**
         * Workflow tasks the worker runs at once. An eager start needs a free one (else it silently becomes a
         * normal start through the task queue), each case's task holds one for its local activities, and each
         * outstanding poll holds one: size it above the concurrency served plus the pollers.
         */
        workflowTaskSlots: z.coerce.number().int().min(2).max(10_000),
        /**
         * A case run's workflow-task timeout: a case's first task runs its local activities (the Python node, the
         * end's write and callback), so the timeout bounds the whole case's time in this process. The worker
         * heartbeats the task at 80 % of it, and past it the server hands the task again (the work repeats); a
         * longer one also delays the hand-over of a task whose worker died. Temporal caps it at 120 s.
         */
        caseWorkflowTaskTimeoutMs: z.coerce.number().int().min(1000).max(120_000),
        /** How often the engine is pinged while it answers (every second while it does not). */
        probeIntervalMs: z.coerce.number().int().min(100),
        /**
         * How long a ping may take before the engine counts as down. A loaded engine answers late, it is not
         * gone (a refused connection fails at once whatever this is): too short and a burst is refused with 503s.
         */
        probeTimeoutMs: z.coerce.number().int().min(100),
        workerMetricsPort: port,
        /** Tag runs with our search attributes; off for a namespace where they are not registered (docs/running.md). */
        searchAttributes: bool,
      })
      .refine((t) => !t.tenantsMayUseUi || t.uiUrl !== undefined, {
        path: ['tenantsMayUseUi'],
        message: 'needs TEMPORAL_UI_URL: the base URL of a Temporal UI that enforces access',
      }),
    cases: z.object({
      defaultDeadlineMs: z.coerce.number().int().min(1000),
      maxDeadlineMs: z.coerce.number().int().min(1000),
      maxInputBytes: z.coerce.number().int().min(1024),
      maxNodeOutputBytes: z.coerce.number().int().min(1024),
      /** A case accepted for execution whose run has not started after this long is started by the API's recovery loop. */
      resumeUnstartedAfterMs: z.coerce.number().int().min(100),
      /** How often the API compares RUNNING cases with their Temporal runs and closes those whose run ended unrecorded. */
      reconcileIntervalMs: z.coerce.number().int().min(100),
      /** Activity nodes of one case running at once; the rest wait for a slot (recorded in the run's input at start). */
      maxParallelNodes: z.coerce.number().int().min(1).max(100),
      /** How deep call_workflow nodes may nest cases (a case calling a case … ); checked at save and at run time. */
      maxCallDepth: z.coerce.number().int().min(1).max(maxCallDepthBound),
      /** Sub-workflow cases one top-level case may start through its calls, at any depth; checked as each starts. */
      maxCallCases: z.coerce.number().int().min(1),
      /** Reruns a bulk rerun starts per second at most (each batch on its own). */
      rerunBatchPerSecond: z.coerce.number().int().min(1).max(1000),
      /** Cases one bulk rerun may match; a wider filter is refused. */
      rerunBatchMaxCases: z.coerce.number().int().min(1),
      /** Bulk reruns one organization may have running at once; another is refused (409) until one ends. */
      maxRunningRerunBatches: z.coerce.number().int().min(1),
      /** The longest a case may wait on people (human_task nodes) in all; waiting does not count against its deadline. */
      maxWaitMs: z.coerce.number().int().min(60_000),
      /** How far ahead an execute's startAt may be (a delayed start). */
      maxStartDelayMs: z.coerce.number().int().min(1000),
      /** Cases of one organization running at once where it has no cap of its own (docs/concurrency.md); null: no cap. */
      maxConcurrentPerOrganization: z.coerce.number().int().min(1).nullable(),
      /**
       * The API's intake per organization (docs/concurrency.md#intake-rate): at most `perOrganization` initiates, and
       * as many executes, in each fixed window of `windowMs`, counted in the store across API processes; over it 429
       * with Retry-After. null (the default): no limit, and nothing counted.
       */
      intakeRateLimit: z.object({
        perOrganization: z.coerce.number().int().min(1).nullable(),
        windowMs: z.coerce.number().int().min(1000),
      }),
      /** How often queued cases are given the slots freed without a case ending (a person's wait, a raised cap, a crash). */
      admissionIntervalMs: z.coerce.number().int().min(100),
      /**
       * Fair share under contention (docs/concurrency.md#fair-share): while another organization is active (a
       * case queued, or one started within activeWindowMs), an organization without a cap of its own runs at most
       * max(floor, budget / active organizations) runs younger than runnableMs; alone it is not limited.
       * It engages only while the highest event-loop utilization of the processes that run case work is at least
       * `saturation` (0: always); each of them publishes its own every loadIntervalMs. budget 0: twice the Python servers.
       */
      fairShare: z.object({
        enabled: bool,
        budget: z.coerce.number().int().min(0).max(100_000),
        floor: z.coerce.number().int().min(1).max(100_000),
        activeWindowMs: z.coerce.number().int().min(1000).max(3_600_000),
        runnableMs: z.coerce.number().int().min(500).max(3_600_000),
        saturation: z.coerce.number().min(0).max(1),
        loadIntervalMs: z.coerce.number().int().min(100).max(3_600_000),
      }),
    }),
    schedules: z.object({
      /** The shortest interval a schedule may fire at. */
      minIntervalSeconds: z.coerce.number().int().min(1),
      /** The longest catch-up window: how late a firing missed while Temporal was down may still run. */
      maxCatchupWindowSeconds: z.coerce.number().int().min(10).max(2_000_000),
      /** The most firings one backfill may ask for. */
      maxBackfillFirings: z.coerce.number().int().min(1),
      /** Schedules one workspace may hold; another is refused (409) until one is deleted. */
      maxPerWorkspace: z.coerce.number().int().min(1),
    }),
    python: z.object({
      /** Fork servers in the sandboxed pool; 0 means one per CPU. */
      poolSize: z.coerce.number().int().min(0).max(64),
      /** Fork servers kept started while idle; the pool grows to poolSize on demand and back after a minute idle. */
      warmServers: z.coerce.number().int().min(1).max(64),
      allowUnsandboxed: bool,
      /** The bubblewrap binary the sandbox starts through; missing, the pool runs unsandboxed (opted in) or refuses. */
      bwrapPath: z.string().refine((p) => path.isAbsolute(p), 'an absolute path'),
      defaultTimeoutMs: z.coerce.number().int().min(100).max(600_000),
      /** Calls one organization may have waiting for a runner; more are refused as retryable back-pressure. */
      maxQueuedPerOrganization: z.coerce.number().int().min(1),
      /** Calls waiting for a runner in all, the last guard. */
      maxQueued: z.coerce.number().int().min(1),
      /** Scratch space of one Python call in MB: its own tmpfs, emptied when the call ends. */
      scratchMb: z.coerce.number().int().min(1).max(4096),
    }),
    secrets: z.object({ masterKey: z.string().min(1).optional(), keyFile: z.string().min(1).optional() }),
    files: z.object({
      storage: z.enum(['local', 's3']),
      uploadUrlTtlSeconds: z.coerce
        .number()
        .int()
        .min(1)
        .max(7 * 24 * 3600),
      signingSecret: z.string().min(32, 'at least 32 characters').optional(),
      /** File reads by the nodes of one case (each read of a file counts, retries too). */
      maxReadsPerCase: z.coerce.number().int().min(1),
      /** Bytes of files read by the nodes of one case, in total. */
      maxReadBytesPerCase: z.coerce.number().int().min(1),
      s3: z.object({
        bucket: z.string().min(1).optional(),
        region: z.string().min(1),
        endpoint: z.url().optional(),
        accessKeyId: z.string().min(1).optional(),
        secretAccessKey: z.string().min(1).optional(),
        forcePathStyle: bool.optional(),
        prefix: z.string(),
      }),
    }),
    callbacks: z.object({
      timeoutMs: z.coerce.number().int().min(100),
      initialIntervalMs: z.coerce.number().int().min(1),
      backoffCoefficient: z.coerce.number().min(1),
      maximumIntervalMs: z.coerce.number().int().min(1),
      maxElapsedMs: z.coerce.number().int().min(0),
      secretRotationOverlapMs: z.coerce.number().int().min(0),
      /** How long a workspace's signing secrets are reused by the deliveries of this process (at most 1 s; 0: off). */
      secretCacheMs: z.coerce.number().int().min(0).max(1000),
      /** Redeliveries allowed per window, per case and per workspace. */
      redeliverWindowMs: z.coerce.number().int().min(1000),
      redeliverPerCase: z.coerce.number().int().min(1),
      redeliverPerWorkspace: z.coerce.number().int().min(1),
      /** How often the API's sweep looks for pending deliveries nothing is delivering. */
      sweepIntervalMs: z.coerce.number().int().min(100),
      /** How long past its due time a pending delivery is left to whatever starts its workflow (a redelivery's start must not race it). */
      sweepGraceMs: z.coerce.number().int().min(1000),
    }),
    /** Defaults for organizations without their own retention policy (days; null: kept), and the purge's pace. */
    retention: z.object({
      keepDays: z.coerce.number().int().min(1).nullable(),
      keepFailedDays: z.coerce.number().int().min(1).nullable(),
      batchSize: z.coerce.number().int().min(1).max(10_000),
      intervalMinutes: z.coerce.number().int().min(1),
    }),
    events: z.object({
      /** How long a workspace's enabled event subscriptions are reused by case ends in one process (0: off). */
      subscriberCacheMs: z.coerce.number().int().min(0).max(60_000),
      /** Event subscriptions one workspace may hold; another is refused (409) until one is deleted. */
      maxSubscriptionsPerWorkspace: z.coerce.number().int().min(1),
    }),
    /** An OpenAI-compatible chat-completions endpoint; without baseUrl generation uses the offline planner. */
    llm: z.object({
      baseUrl: z.url().optional(),
      apiKey: z.string().min(1).optional(),
      model: z.string().min(1),
      timeoutMs: z.coerce.number().int().min(1000),
    }),
    /** Inbound webhook triggers (docs/webhook-triggers.md). */
    hooks: z.object({
      /** Bytes of one delivery's body; a larger one is refused with 413 before anything else is read. */
      maxPayloadBytes: z.coerce
        .number()
        .int()
        .min(1024)
        .max(10 * 1024 * 1024),
      /** The longest a synchronous hook may hold a delivery waiting for the case's results. */
      maxSyncTimeoutMs: z.coerce.number().int().min(1000).max(120_000),
      /** Hooks one workspace may hold; another is refused (409) until one is deleted. */
      maxPerWorkspace: z.coerce.number().int().min(1),
    }),
    generation: z.object({
      /** A run still going after this long is cancelled (contract: 25 minutes). */
      timeLimitMs: z.coerce.number().int().min(1000),
      /** Review rounds that send errors back to the builders before the run settles for partial. */
      maxReviewRounds: z.coerce.number().int().min(0).max(10),
      /** Requests per key to the generation endpoints in one fixed window. */
      rateLimitMax: z.coerce.number().int().min(1),
      rateLimitWindowMs: z.coerce.number().int().min(1000),
      /** Bytes of one attached file given to the agents (text files only). */
      maxFileBytes: z.coerce.number().int().min(1024),
    }),
    outbound: z.object({
      /** CIDRs tenant-supplied URLs may reach although private, special-purpose or this host's own; metadata and link-local stay refused. */
      allowCidrs: listOf((v) => new CidrList(v), 'a comma-separated list of CIDRs such as 10.0.0.0/8,127.0.0.1/32'),
      /** host:port destinations reachable although private or this host's own: one service each, not a range. */
      allowTargets: listOf(
        (v) => new TargetList(v),
        'a comma-separated list of host:port such as 127.0.0.1:8787,echo.internal:8080,[::1]:9000',
      ),
    }),
    connections: z.object({
      /** How long a connection's smoke test waits for the action's endpoint. */
      smokeTestTimeoutMs: z.coerce.number().int().min(100).max(120_000),
      /** OAuth connections: token requests and the refresh workflow's plan (docs/connections.md). */
      oauth: z.object({
        /** One request to a provider's token endpoint. */
        tokenRequestTimeoutMs: z.coerce.number().int().min(1000).max(120_000),
        /** Tokens are refreshed this long before they expire at most... */
        refreshMarginMs: z.coerce.number().int().min(0),
        /** ...or this fraction of their lifetime when that is shorter. */
        refreshMarginFraction: z.coerce.number().min(0).max(0.9),
        /** An idle connection's tokens are refreshed at least this often. */
        idleRefreshMs: z.coerce.number().int().min(60_000),
        /** Refreshes per refresh-workflow run before it continues as new. */
        refreshesPerRun: z.coerce.number().int().min(1).max(1000),
        /** Backoff after a refresh failed for a transient reason (5xx, timeout), doubling up to the maximum. */
        retryInitialMs: z.coerce.number().int().min(1000),
        retryMaxMs: z.coerce.number().int().min(1000),
      }),
    }),
  });

export type Config = z.infer<ReturnType<typeof configSchema>>;

/** Environment variables and the config key each one sets. */
const envMap: Record<string, string> = {
  CASEFLOW_DATA_DIR: 'dataDir',
  CASEFLOW_SMOKE_TEST_TIMEOUT_MS: 'connections.smokeTestTimeoutMs',
  CASEFLOW_OAUTH_TOKEN_TIMEOUT_MS: 'connections.oauth.tokenRequestTimeoutMs',
  CASEFLOW_OAUTH_REFRESH_MARGIN_MS: 'connections.oauth.refreshMarginMs',
  CASEFLOW_OAUTH_IDLE_REFRESH_MS: 'connections.oauth.idleRefreshMs',
  HOST: 'host',
  PORT: 'port',
  CASEFLOW_PUBLIC_URL: 'publicUrl',
  LOG_LEVEL: 'logLevel',
  LOG_FORMAT: 'logFormat',
  CASEFLOW_BODY_LIMIT: 'bodyLimit',
  CASEFLOW_SHUTDOWN_GRACE_MS: 'shutdownGraceMs',
  CASEFLOW_KEY_CACHE_MS: 'keyCacheMs',
  DATABASE_URL: 'databaseUrl',
  CASEFLOW_ADMIN_TOKEN: 'adminToken',
  CASEFLOW_METRICS_TOKEN: 'metrics.token',
  CASEFLOW_METRICS_PORT: 'metrics.port',
  CASEFLOW_METRICS_HOST: 'metrics.host',
  TEMPORAL_ADDRESS: 'temporal.address',
  TEMPORAL_NAMESPACE: 'temporal.namespace',
  CASEFLOW_TASK_QUEUE: 'temporal.taskQueue',
  TEMPORAL_API_KEY: 'temporal.apiKey',
  TEMPORAL_TLS: 'temporal.tls',
  TEMPORAL_TLS_CERT_PATH: 'temporal.tlsCertPath',
  TEMPORAL_TLS_KEY_PATH: 'temporal.tlsKeyPath',
  TEMPORAL_TLS_CA_PATH: 'temporal.tlsCaPath',
  TEMPORAL_TLS_SERVER_NAME: 'temporal.tlsServerName',
  TEMPORAL_CLI_PATH: 'temporal.cliPath',
  TEMPORAL_UI_URL: 'temporal.uiUrl',
  CASEFLOW_TENANTS_MAY_USE_TEMPORAL_UI: 'temporal.tenantsMayUseUi',
  TEMPORAL_DEV_PORT: 'temporal.devServer.port',
  TEMPORAL_DEV_UI_PORT: 'temporal.devServer.uiPort',
  TEMPORAL_DEV_START_TIMEOUT_MS: 'temporal.devServer.startTimeoutMs',
  TEMPORAL_DEV_MAX_RESTARTS: 'temporal.devServer.maxRestarts',
  TEMPORAL_DEV_RESTART_WINDOW_MS: 'temporal.devServer.restartWindowMs',
  TEMPORAL_DEV_FAIRNESS: 'temporal.devServer.fairness',
  TEMPORAL_DEV_DYNAMIC_CONFIG: 'temporal.devServer.dynamicConfig',
  TEMPORAL_DEV_SQLITE_PRAGMAS: 'temporal.devServer.sqlitePragmas',
  TEMPORAL_DEV_GOGC: 'temporal.devServer.goGc',
  TEMPORAL_DEV_METRICS_PORT: 'temporal.devServer.metricsPort',
  TEMPORAL_DEV_LEAN_VISIBILITY: 'temporal.devServer.leanVisibility',
  CASEFLOW_MAX_CACHED_WORKFLOWS: 'temporal.maxCachedWorkflows',
  CASEFLOW_WORKFLOW_TASK_SLOTS: 'temporal.workflowTaskSlots',
  CASEFLOW_CASE_WORKFLOW_TASK_TIMEOUT_MS: 'temporal.caseWorkflowTaskTimeoutMs',
  TEMPORAL_PROBE_INTERVAL_MS: 'temporal.probeIntervalMs',
  TEMPORAL_PROBE_TIMEOUT_MS: 'temporal.probeTimeoutMs',
  CASEFLOW_WORKER_METRICS_PORT: 'temporal.workerMetricsPort',
  CASEFLOW_SEARCH_ATTRIBUTES: 'temporal.searchAttributes',
  CASEFLOW_CASE_DEADLINE_MS: 'cases.defaultDeadlineMs',
  CASEFLOW_CASE_MAX_DEADLINE_MS: 'cases.maxDeadlineMs',
  CASEFLOW_CASE_MAX_INPUT_BYTES: 'cases.maxInputBytes',
  CASEFLOW_CASE_MAX_NODE_OUTPUT_BYTES: 'cases.maxNodeOutputBytes',
  CASEFLOW_CASE_RESUME_AFTER_MS: 'cases.resumeUnstartedAfterMs',
  CASEFLOW_CASE_RECONCILE_INTERVAL_MS: 'cases.reconcileIntervalMs',
  CASEFLOW_CASE_MAX_PARALLEL_NODES: 'cases.maxParallelNodes',
  CASEFLOW_CASE_MAX_CALL_DEPTH: 'cases.maxCallDepth',
  CASEFLOW_CASE_MAX_CALL_CASES: 'cases.maxCallCases',
  CASEFLOW_RERUN_BATCH_PER_SECOND: 'cases.rerunBatchPerSecond',
  CASEFLOW_RERUN_BATCH_MAX_CASES: 'cases.rerunBatchMaxCases',
  CASEFLOW_RERUN_BATCH_MAX_RUNNING: 'cases.maxRunningRerunBatches',
  CASEFLOW_CASE_MAX_WAIT_MS: 'cases.maxWaitMs',
  CASEFLOW_CASE_MAX_START_DELAY_MS: 'cases.maxStartDelayMs',
  CASEFLOW_CASE_MAX_CONCURRENT_PER_ORGANIZATION: 'cases.maxConcurrentPerOrganization',
  CASEFLOW_CASE_INTAKE_RATE_LIMIT: 'cases.intakeRateLimit.perOrganization',
  CASEFLOW_CASE_INTAKE_RATE_WINDOW_MS: 'cases.intakeRateLimit.windowMs',
  CASEFLOW_CASE_ADMISSION_INTERVAL_MS: 'cases.admissionIntervalMs',
  CASEFLOW_FAIR_SHARE: 'cases.fairShare.enabled',
  CASEFLOW_FAIR_SHARE_BUDGET: 'cases.fairShare.budget',
  CASEFLOW_FAIR_SHARE_FLOOR: 'cases.fairShare.floor',
  CASEFLOW_FAIR_SHARE_ACTIVE_WINDOW_MS: 'cases.fairShare.activeWindowMs',
  CASEFLOW_FAIR_SHARE_RUNNABLE_MS: 'cases.fairShare.runnableMs',
  CASEFLOW_FAIR_SHARE_SATURATION: 'cases.fairShare.saturation',
  CASEFLOW_FAIR_SHARE_LOAD_INTERVAL_MS: 'cases.fairShare.loadIntervalMs',
  CASEFLOW_SCHEDULE_MIN_INTERVAL_SECONDS: 'schedules.minIntervalSeconds',
  CASEFLOW_SCHEDULE_MAX_CATCHUP_WINDOW_SECONDS: 'schedules.maxCatchupWindowSeconds',
  CASEFLOW_SCHEDULE_MAX_BACKFILL_FIRINGS: 'schedules.maxBackfillFirings',
  CASEFLOW_SCHEDULE_MAX_PER_WORKSPACE: 'schedules.maxPerWorkspace',
  CASEFLOW_PYTHON_POOL_SIZE: 'python.poolSize',
  CASEFLOW_PYTHON_WARM_SERVERS: 'python.warmServers',
  CASEFLOW_PYTHON_ALLOW_UNSANDBOXED: 'python.allowUnsandboxed',
  CASEFLOW_PYTHON_BWRAP_PATH: 'python.bwrapPath',
  CASEFLOW_PYTHON_TIMEOUT_MS: 'python.defaultTimeoutMs',
  CASEFLOW_PYTHON_MAX_QUEUED_PER_ORG: 'python.maxQueuedPerOrganization',
  CASEFLOW_PYTHON_MAX_QUEUED: 'python.maxQueued',
  CASEFLOW_PYTHON_SCRATCH_MB: 'python.scratchMb',
  CASEFLOW_MASTER_KEY: 'secrets.masterKey',
  CASEFLOW_MASTER_KEY_FILE: 'secrets.keyFile',
  CASEFLOW_FILE_STORAGE: 'files.storage',
  CASEFLOW_UPLOAD_URL_TTL_SECONDS: 'files.uploadUrlTtlSeconds',
  CASEFLOW_FILE_SIGNING_SECRET: 'files.signingSecret',
  CASEFLOW_FILE_MAX_READS_PER_CASE: 'files.maxReadsPerCase',
  CASEFLOW_FILE_MAX_READ_BYTES_PER_CASE: 'files.maxReadBytesPerCase',
  CASEFLOW_S3_BUCKET: 'files.s3.bucket',
  CASEFLOW_S3_REGION: 'files.s3.region',
  CASEFLOW_S3_ENDPOINT: 'files.s3.endpoint',
  CASEFLOW_S3_ACCESS_KEY_ID: 'files.s3.accessKeyId',
  CASEFLOW_S3_SECRET_ACCESS_KEY: 'files.s3.secretAccessKey',
  CASEFLOW_S3_FORCE_PATH_STYLE: 'files.s3.forcePathStyle',
  CASEFLOW_S3_PREFIX: 'files.s3.prefix',
  CASEFLOW_CALLBACK_TIMEOUT_MS: 'callbacks.timeoutMs',
  CASEFLOW_CALLBACK_MAX_ELAPSED_MS: 'callbacks.maxElapsedMs',
  CASEFLOW_CALLBACK_SECRET_CACHE_MS: 'callbacks.secretCacheMs',
  CASEFLOW_REDELIVER_WINDOW_MS: 'callbacks.redeliverWindowMs',
  CASEFLOW_REDELIVER_PER_CASE: 'callbacks.redeliverPerCase',
  CASEFLOW_REDELIVER_PER_WORKSPACE: 'callbacks.redeliverPerWorkspace',
  CASEFLOW_CALLBACK_SWEEP_INTERVAL_MS: 'callbacks.sweepIntervalMs',
  CASEFLOW_CALLBACK_SWEEP_GRACE_MS: 'callbacks.sweepGraceMs',
  CASEFLOW_OUTBOUND_ALLOW_CIDRS: 'outbound.allowCidrs',
  CASEFLOW_OUTBOUND_ALLOW_TARGETS: 'outbound.allowTargets',
  CASEFLOW_EVENT_SUBSCRIBER_CACHE_MS: 'events.subscriberCacheMs',
  CASEFLOW_EVENT_MAX_SUBSCRIPTIONS_PER_WORKSPACE: 'events.maxSubscriptionsPerWorkspace',
  CASEFLOW_RETENTION_KEEP_DAYS: 'retention.keepDays',
  CASEFLOW_RETENTION_KEEP_FAILED_DAYS: 'retention.keepFailedDays',
  CASEFLOW_RETENTION_INTERVAL_MINUTES: 'retention.intervalMinutes',
  LLM_BASE_URL: 'llm.baseUrl',
  LLM_API_KEY: 'llm.apiKey',
  LLM_MODEL: 'llm.model',
  LLM_TIMEOUT_MS: 'llm.timeoutMs',
  CASEFLOW_HOOK_MAX_PAYLOAD_BYTES: 'hooks.maxPayloadBytes',
  CASEFLOW_HOOK_MAX_SYNC_TIMEOUT_MS: 'hooks.maxSyncTimeoutMs',
  CASEFLOW_HOOK_MAX_PER_WORKSPACE: 'hooks.maxPerWorkspace',
  CASEFLOW_GENERATION_TIME_LIMIT_MS: 'generation.timeLimitMs',
  CASEFLOW_GENERATION_REVIEW_ROUNDS: 'generation.maxReviewRounds',
  CASEFLOW_GENERATION_RATE_LIMIT: 'generation.rateLimitMax',
  CASEFLOW_GENERATION_RATE_WINDOW_MS: 'generation.rateLimitWindowMs',
};

type Json = { [key: string]: unknown };

function getPath(source: Json, dotted: string): unknown {
  let node: unknown = source;
  for (const key of dotted.split('.')) node = isObject(node) ? node[key] : undefined;
  return node;
}

function setPath(target: Json, dotted: string, value: unknown): void {
  const keys = dotted.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null) node[key] = {};
    node = node[key] as Json;
  }
  node[keys[keys.length - 1] as string] = value;
}

function readJson(file: string): Json {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Json;
  } catch (err) {
    throw new ConfigError([`${file}: ${(err as Error).message}`]);
  }
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Builds the configuration from config/default.json, an optional
 * CASEFLOW_CONFIG JSON file, then environment variables, and validates it so
 * that a bad value stops the start with a message naming where it came from.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Json = {}): Config {
  const raw = readJson(path.join(projectRoot, 'config', 'default.json'));
  const extra = env.CASEFLOW_CONFIG;
  if (extra) {
    if (!existsSync(extra)) throw new ConfigError([`CASEFLOW_CONFIG: file ${extra} does not exist`]);
    deepMerge(raw, readJson(extra));
  }
  for (const [name, key] of Object.entries(envMap)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    // A `key=value,…` variable changes the entries it names and keeps the others of its record (the engine's defaults).
    const current = getPath(raw, key);
    const pairs = keyValues(value);
    setPath(raw, key, isObject(current) && isObject(pairs) ? { ...current, ...pairs } : value);
  }
  deepMerge(raw, overrides);
  const parsed = configSchema().safeParse(raw);
  if (!parsed.success) {
    const sources = Object.fromEntries(Object.entries(envMap).map(([name, key]) => [key, name]));
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = issue.path.join('.');
        // A record's entry (sqlitePragmas.synchronous) came from the variable that set the record.
        const name = Object.keys(sources).find((k) => key === k || key.startsWith(`${k}.`));
        const variable = name === undefined ? undefined : sources[name];
        const source = variable && env[variable] !== undefined ? ` (from ${variable})` : '';
        return `${key}${source}: ${issue.message}`;
      }),
    );
  }
  const config = parsed.data;
  config.dataDir = path.resolve(config.dataDir);
  return config;
}

function deepMerge(target: Json, source: Json): void {
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    if (isObject(value) && isObject(current)) deepMerge(current, value);
    else target[key] = value;
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The base URL callers use to reach this service (file URLs, links): the
 * configured one, else one derived from the listen address (never from a
 * request's Host header).
 */
export function publicUrl(config: Config): string {
  return (config.publicUrl ?? listenUrl(config.host, config.port)).replace(/\/$/, '');
}

/** http://host:port of a listen address; a wildcard address is reached on loopback. */
export function listenUrl(host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}
