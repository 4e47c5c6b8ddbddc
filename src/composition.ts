import { availableParallelism } from 'node:os';
import { KeyAuthentication } from './auth/key-authentication.js';
import { CallbackService } from './callbacks/callback-service.js';
import { WebhookSecrets } from './callbacks/webhook-secrets.js';
import { CaseEnds } from './cases/case-ends.js';
import { CaseService } from './cases/case-service.js';
import { CaseRunReconciler } from './cases/run-reconciler.js';
import { DeliverySweep } from './callbacks/delivery-sweep.js';
import { RerunBatchService } from './cases/rerun-batch-service.js';
import { RerunService } from './cases/rerun-service.js';
import { CatalogService } from './catalog/catalog-service.js';
import { CodeNodeService } from './code/code-node-service.js';
import { ConnectionRuntime } from './connections/connection-runtime.js';
import { ConnectionService } from './connections/connection-service.js';
import { CredentialVault } from './connections/credential-vault.js';
import { OAuthEvents } from './connections/oauth-events.js';
import { OAuthFlow } from './connections/oauth-flow.js';
import { OAuthTokenEndpoint } from './connections/oauth-provider.js';
import { OAuthTemporal } from './connections/oauth-temporal.js';
import { OAuthTokens } from './connections/oauth-tokens.js';
import type { RefreshSettings } from './temporal/contracts/oauth.js';
import { temporalSmokeTests } from './connections/smoke-test-runner.js';
import { SourceGates } from './code/source-gates.js';
import { publicUrl, type Config } from './config/config.js';
import { secretBoxFromConfig } from './crypto/secret-box.js';
import { DiscoveryService } from './discovery/discovery-service.js';
import { createFileService } from './files/file-service.js';
import { GenerationService } from './generation/generation-service.js';
import { GenerationTeam } from './generation/generation-team.js';
import { LlmAgents } from './generation/llm-agents.js';
import { OfflinePlanner } from './generation/offline-planner.js';
import { LlmClient } from './llm/llm-client.js';
import { activityCancellation } from './temporal/activity-cancellation.js';
import { ProcessSources } from './generation/process-source.js';
import { WorkspaceTools } from './generation/workspace-tools.js';
import type { Logger } from './logging/logger.js';
import type { Metrics } from './metrics/metrics.js';
import { Outbound } from './net/outbound.js';
import type { PythonRunnerPool } from './python/pool.js';
import { RateLimiter } from './rate-limits/rate-limiter.js';
import { IdempotentRequests } from './idempotency/idempotent-requests.js';
import { HookService } from './hooks/hook-service.js';
import { HookSecrets } from './hooks/hook-secrets.js';
import type { Store } from './store/database.js';
import { createRepositories, type Repositories } from './store/repositories.js';
import type { TemporalHandle } from './temporal/connection.js';
import type { Tracing } from './tracing/tracing.js';
import type { EngineHealth } from './temporal/engine-health.js';
import { TemporalCaseRuns } from './temporal/gateways/case-runs.js';
import { TemporalGenerationRuns } from './temporal/gateways/generation-runs.js';
import { TemporalRerunBatches } from './temporal/gateways/rerun-batches.js';
import { TemporalCallbackDeliveries } from './temporal/gateways/callback-deliveries.js';
import { TaskService } from './tasks/task-service.js';
import { TemporalTaskDecisions } from './temporal/gateways/task-decisions.js';
import { TemporalSchedules } from './temporal/gateways/schedules.js';
import { ScheduleService } from './schedules/schedule-service.js';
import { SubscriptionSecrets } from './subscriptions/subscription-secrets.js';
import { SubscriptionService } from './subscriptions/subscription-service.js';
import { RetentionService } from './retention/retention-service.js';
import { CaseAdmission, fairShareSettings } from './cases/admission/case-admission.js';
import { CaseWorkLoad } from './cases/admission/case-work-load.js';
import { eventLoopLoad } from './cases/admission/event-loop-load.js';
import { TemporalRetentionSchedule } from './temporal/gateways/retention-schedule.js';
import { TenancyService } from './tenancy/tenancy-service.js';
import { WorkflowService } from './definitions/workflow-service.js';
import { LlmNodes } from './llm/llm-nodes.js';

/** What a process opens once before anything is wired: configuration, logs, the store, Temporal, the Python pool. */
export interface Infrastructure {
  config: Config;
  logger: Logger;
  store: Store;
  temporal: TemporalHandle;
  /** Sandboxed Python: the authoring scan on the API side, node code on the worker side. */
  python: PythonRunnerPool;
  /** The process's metrics (served at /metrics). */
  metrics: Metrics;
  /** What the process knows of its workflow engine (readiness, liveness, execute). */
  engine: EngineHealth;
  /** OpenTelemetry traces (src/tracing): the no-op `noTracing` unless OTEL_EXPORTER_OTLP_* turn them on. */
  tracing: Tracing;
}

/** The OAuth refresh workflow's plan, from the configuration. */
function refreshSettings(config: Config): RefreshSettings {
  const o = config.connections.oauth;
  return {
    marginMs: o.refreshMarginMs,
    marginFraction: o.refreshMarginFraction,
    idleRefreshMs: o.idleRefreshMs,
    refreshesPerRun: o.refreshesPerRun,
    retryInitialMs: o.retryInitialMs,
    retryMaxMs: o.retryMaxMs,
    requestTimeoutMs: o.tokenRequestTimeoutMs,
  };
}

/**
 * The composition root: every repository and service is built here, once per
 * process, so secrets are read and storage is opened once and the API and the
 * worker share the same objects. A new area adds its service here, in one
 * line of the returned object; `Services` follows.
 */
function buildServices(infra: Infrastructure, repos: Repositories) {
  const { config, logger, temporal, python, metrics, engine } = infra;
  const caseRuns = new TemporalCaseRuns(temporal, metrics.registry, config.temporal.caseWorkflowTaskTimeoutMs);
  const gates = new SourceGates(python, logger);
  const files = createFileService({ repos, config, logger });
  const box = secretBoxFromConfig(config);
  const vault = new CredentialVault(box);
  const catalog = new CatalogService(repos.catalog, (source, field) => gates.scanOrThrow(source, field));
  const authentication = new KeyAuthentication(repos.tenancy, { ttlMs: config.keyCacheMs, maxEntries: 10_000 });
  const tasks = new TaskService({
    repo: repos.tasks,
    cases: repos.cases,
    decisions: new TemporalTaskDecisions(temporal),
    registry: metrics.registry,
    linkTtlMs: config.cases.maxWaitMs,
    maxOutputBytes: config.cases.maxNodeOutputBytes,
    authentication,
  });
  const workflows = new WorkflowService(
    repos.workflows,
    repos.tenancy,
    gates,
    { connections: repos.connections, catalog },
    config.cases.maxCallDepth,
    (auth, graph) => tasks.assigneeProblems(auth, graph),
  );
  const secrets = new WebhookSecrets(repos.callbacks, box, config.callbacks.secretRotationOverlapMs, {
    ttlMs: config.callbacks.secretCacheMs,
    maxEntries: 10_000,
  });
  const outbound = new Outbound({ ...config.outbound, withTraceContext: infra.tracing.withTraceContext });
  const smokeTestTimeoutMs = config.connections.smokeTestTimeoutMs;
  const discovery = new DiscoveryService({ repo: repos.discovery, tenancy: repos.tenancy });
  /** What connected systems a workspace offers generation: prompt runs' tools and process runs' bindings alike. */
  const tools = new WorkspaceTools({ connections: repos.connections, catalog: repos.catalog });
  const runSmokeTest = temporalSmokeTests(temporal, repos.connections, logger, smokeTestTimeoutMs);
  const oauthLogger = logger.child({ component: 'oauth' });
  const oauthEvents = new OAuthEvents(oauthLogger, metrics.registry);
  const oauthTemporal = new OAuthTemporal(temporal, refreshSettings(config), oauthLogger);
  const tokenEndpoint = new OAuthTokenEndpoint(outbound, config.connections.oauth.tokenRequestTimeoutMs);
  const oauthTokens = new OAuthTokens({
    connections: repos.connections,
    vault,
    endpoint: tokenEndpoint,
    temporal: oauthTemporal,
    events: oauthEvents,
  });
  const oauth = new OAuthFlow({
    attempts: repos.oauth,
    connections: repos.connections,
    vault,
    endpoint: tokenEndpoint,
    tokens: oauthTokens,
    temporal: oauthTemporal,
    events: oauthEvents,
    runSmokeTest,
    publicUrl: () => publicUrl(config),
    logger: oauthLogger,
  });
  const generation = new GenerationService({
    runs: repos.generation,
    workflows: repos.workflows,
    tenancy: repos.tenancy,
    files,
    processes: new ProcessSources({ discovery, tools }),
    tools,
    config,
    temporal: new TemporalGenerationRuns(temporal),
    logger,
  });
  const idempotency = new IdempotentRequests(repos.idempotency);
  const callbackDeliveries = new TemporalCallbackDeliveries(temporal);
  const subscriptionSecrets = new SubscriptionSecrets(
    repos.subscriptions,
    box,
    config.callbacks.secretRotationOverlapMs,
  );
  const subscriptions = new SubscriptionService({
    repo: repos.subscriptions,
    callbacks: repos.callbacks,
    tenancy: repos.tenancy,
    secrets: subscriptionSecrets,
    deliveries: callbackDeliveries,
    outbound,
    subscriberCacheMs: config.events.subscriberCacheMs,
    maxPerWorkspace: config.events.maxSubscriptionsPerWorkspace,
    authentication,
    logger: logger.child({ component: 'subscriptions' }),
  });
  const caseWorkLoad = new CaseWorkLoad(
    repos.processLoads,
    eventLoopLoad(),
    config.cases.fairShare.loadIntervalMs,
    (err, message) => logger.warn({ err }, message),
  );
  const admission = new CaseAdmission({
    repo: repos.admission,
    cases: repos.cases,
    tenancy: repos.tenancy,
    defaultCap: config.cases.maxConcurrentPerOrganization,
    fairShare: fairShareSettings(config.cases.fairShare, config.python.poolSize || availableParallelism()),
    load: caseWorkLoad,
    registry: metrics.registry,
  });
  // One per process: the worker's activities tell it of case ends, the API's sync deliveries wait on it.
  const caseEnds = new CaseEnds();
  const cases = new CaseService({
    config,
    logger,
    temporal,
    repo: repos.cases,
    workflows,
    files,
    outbound,
    metrics,
    engine,
    runs: caseRuns,
    admission,
    events: subscriptions,
    authentication,
    taskHistory: repos.tasks,
    ends: caseEnds,
  });
  const reruns = new RerunService({ config, repo: repos.cases, workflows, cases });
  return {
    /** Who is calling: the API key's rules (expiry, revocation, membership). */
    authentication,
    tenancy: new TenancyService(repos.tenancy, (keyId) => authentication.forget(keyId)),
    workflows,
    files,
    cases,
    /** Concurrency caps: organizations' caps (the operator's), the queue's admission rules. */
    admission,
    /** The fair share's saturation signal: this process's event-loop load and that of the processes that run case work. */
    caseWorkLoad,
    /** Schedules: rows here, Temporal Schedules there; their firings create cases through `cases`. */
    schedules: new ScheduleService({
      config,
      logger: logger.child({ component: 'schedules' }),
      repo: repos.schedules,
      workflows: repos.workflows,
      cases,
      authentication,
      engine: new TemporalSchedules(temporal),
      searchAttributes: temporal.searchAttributes,
    }),
    /** Reruns of ended cases, one at a time. */
    reruns,
    /** Bulk reruns: batches worked through by a Temporal workflow. */
    rerunBatches: new RerunBatchService({
      config,
      logger,
      temporal,
      repo: repos.rerunBatches,
      cases: repos.cases,
      reruns,
      authentication,
      runs: new TemporalRerunBatches(temporal),
    }),
    /** Retention policies, the scheduled purge, and the erasure of a case on request. */
    retention: new RetentionService({
      repo: repos.retention,
      tenancy: repos.tenancy,
      cases,
      files,
      schedule: new TemporalRetentionSchedule(temporal),
      dialect: infra.store.dialect,
      settings: config.retention,
      logger: logger.child({ component: 'retention' }),
      registry: metrics.registry,
    }),
    /** API side: closes RUNNING cases whose run ended without recording them. */
    caseReconciler: new CaseRunReconciler({
      repo: repos.cases,
      runs: caseRuns,
      cases,
      callbacks: callbackDeliveries,
      deliveries: repos.callbacks,
      events: subscriptions,
      logger,
      childStartGraceMs: config.cases.resumeUnstartedAfterMs,
    }),
    /** API side: starts the workflows of pending deliveries nothing is delivering (a process died before their start). */
    deliverySweep: new DeliverySweep({
      repo: repos.callbacks,
      tenancy: repos.tenancy,
      deliveries: callbackDeliveries,
      runs: caseRuns,
      graceMs: config.callbacks.sweepGraceMs,
      batch: 100,
      logger: logger.child({ component: 'delivery-sweep' }),
      registry: metrics.registry,
    }),
    codeNodes: new CodeNodeService(repos.codeNodes, gates),
    catalog,
    connections: new ConnectionService({
      repo: repos.connections,
      catalog,
      tenancy: repos.tenancy,
      vault,
      oauth,
      runSmokeTest,
    }),
    /** OAuth: the authorization flow (API side; its timer activities run in the worker). */
    oauth,
    /** OAuth tokens: stored after authorization, refreshed by the refresh workflow's activity. */
    oauthTokens,
    /** Worker side: decrypts a connection's credential inside an activity, and nowhere else. */
    connectionRuntime: new ConnectionRuntime({
      connections: repos.connections,
      catalog: repos.catalog,
      vault,
      oauthTokens,
      outbound,
      python,
      smokeTestTimeoutMs,
      withTraceContext: infra.tracing.withTraceContext,
    }),
    /** Worker side: the LLM of llm_agent nodes (the key stays in this process's configuration). */
    llmNodes: new LlmNodes(config.llm),
    discovery,
    generation,
    /** Worker side: the work of a generation run's tasks, with the LLM's agents built once here. */
    generationTeam: new GenerationTeam({
      generation,
      files,
      python,
      maxFileBytes: config.generation.maxFileBytes,
      offline: new OfflinePlanner(),
      online: config.llm.baseUrl
        ? new LlmAgents(
            new LlmClient({
              baseUrl: config.llm.baseUrl,
              apiKey: config.llm.apiKey,
              model: config.llm.model,
              timeoutMs: config.llm.timeoutMs,
              cancellation: activityCancellation,
            }),
          )
        : undefined,
    }),
    callbacks: new CallbackService({
      repo: repos.callbacks,
      cases: repos.cases,
      tenancy: repos.tenancy,
      secrets,
      deliveries: callbackDeliveries,
      settings: config.callbacks,
      outbound,
      logger: logger.child({ component: 'callbacks' }),
      metrics,
      subscriptionSecrets: (subscriptionId, at) => subscriptionSecrets.signingSecrets(subscriptionId, at),
    }),
    /** Event subscriptions: managed through the API, delivered to when a case ends (worker side). */
    subscriptions,
    /** Request budgets counted in the store, shared by every API process. */
    rateLimits: new RateLimiter(repos.rateLimits),
    /** Human tasks: the inbox (API side) and the rows the case run opens and closes (worker side). */
    tasks,
    /** Idempotency-Key records of case starts and hook deliveries, in the store. */
    idempotency,
    /** Inbound webhook triggers: their management and their signed deliveries. */
    hooks: new HookService({
      repo: repos.hooks,
      workflows: repos.workflows,
      definitions: workflows,
      cases,
      secrets: new HookSecrets(box),
      authentication,
      idempotency,
      maxPerWorkspace: config.hooks.maxPerWorkspace,
      caseEnds,
    }),
  };
}

/** One service per area, holding its rules; the API's routes and the worker's activities both call these. */
export type Services = ReturnType<typeof buildServices>;

export interface Wiring {
  repos: Repositories;
  services: Services;
}

export function wire(infra: Infrastructure): Wiring {
  const repos = createRepositories(infra.store.db);
  return { repos, services: buildServices(infra, repos) };
}
