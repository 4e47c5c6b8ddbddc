import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { wire } from '../../src/composition.js';
import { createActivities } from '../../activities/index.js';
import { loadConfig } from '../../src/config/config.js';
import { secretBoxFromConfig } from '../../src/crypto/secret-box.js';
import { defaultGraph } from '../../src/domain/default-graph.js';
import { generationWorkflowId } from '../../src/temporal/contracts/generation-run.js';
import { initialRunRecord } from '../../src/domain/generation/run.js';
import type { GenerationRunInput } from '../../src/temporal/contracts/generation-run.js';
import { createLogger } from '../../src/logging/logger.js';
import { configuredPoolOptions, PythonRunnerPool } from '../../src/python/pool.js';
import { migrateToLatest, openStore, type Store } from '../../src/store/database.js';
import { GenerationRepo } from '../../src/store/generation-repo.js';
import { TenancyRepo } from '../../src/store/tenancy-repo.js';
import { WorkflowRepo } from '../../src/store/workflow-repo.js';
import { temporalTestServerPath } from '../../src/temporal/binaries.js';
import { EngineHealth } from '../../src/temporal/engine-health.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { PayloadEncryption } from '../../src/temporal/payload-encryption.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { TenancyService } from '../../src/tenancy/tenancy-service.js';
import { FakeLlm } from './fake-llm.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { generationRunContract } from '../../src/temporal/contracts/generation-run.js';
import { noTracing } from '../../src/tracing/tracing.js';

/**
 * The 25-minute limit under Temporal's time-skipping test server: the LLM's
 * quota is exhausted (429, Retry-After 15 minutes, honoured as the retry
 * delay), the server jumps 26 minutes, the run ends cancelled.
 */
let env: TestWorkflowEnvironment;
let store: Store;
let python: PythonRunnerPool;
let dataDir: string;
const llm = new FakeLlm();

beforeAll(async () => {
  const serverPath = temporalTestServerPath();
  if (!serverPath) throw new Error('temporal-test-server not installed (.venv): run npm ci');
  env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: serverPath } },
  });
  await llm.start();
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-gen-limit-'));
  store = openStore(dataDir);
  await migrateToLatest(store.db);
  python = await PythonRunnerPool.create({
    ...configuredPoolOptions(loadConfig({}).python),
    size: 1,
    logger: createLogger('silent'),
  });
});

afterAll(async () => {
  await python?.close();
  await store?.close();
  await env?.teardown();
  await llm.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('cancels a run that passes the 25-minute limit, recording why', async () => {
  llm.script = () => ({ raw: { status: 429, body: '{"error":"quota exhausted"}', headers: { 'retry-after': '900' } } });
  const config = loadConfig({}, { dataDir, llm: { baseUrl: llm.url, timeoutMs: 5000 } });
  const logger = createLogger('silent');
  const bootstrap = await new TenancyService(new TenancyRepo(store.db)).bootstrap();
  if (!bootstrap) throw new Error('no bootstrap');
  const { workflow } = await new WorkflowRepo(store.db).create({
    organizationId: bootstrap.organization.id,
    workspaceId: bootstrap.workspace.id,
    name: 'limit',
    createdBy: bootstrap.user.id,
    graph: defaultGraph(),
    activeStatus: 'inactive',
    orgUnitIds: [],
  });
  const runId = randomUUID();
  const startedAt = new Date().toISOString();
  const input: GenerationRunInput = {
    runId,
    workflowId: workflow.id,
    organizationId: bootstrap.organization.id,
    workspaceId: bootstrap.workspace.id,
    userId: bootstrap.user.id,
    prompt: 'Route invoices by amount',
    displayName: 'limit',
    origin: 'api',
    startedAt,
    fileUrls: [],
    refusedFiles: [],
    planner: 'llm',
    timeLimitMs: config.generation.timeLimitMs,
    maxReviewRounds: 1,
  };
  const runs = new GenerationRepo(store.db);
  await runs.insert({
    organizationId: input.organizationId,
    workspaceId: input.workspaceId,
    createdBy: input.userId,
    record: initialRunRecord(input),
  });
  expect(config.generation.timeLimitMs).toBe(25 * 60_000);

  const taskQueue = `limit-${randomUUID()}`;
  // The time-skipping server has none of our search attributes registered.
  const temporal = {
    connection: env.nativeConnection,
    client: env.client,
    namespace: 'default',
    taskQueue,
    searchAttributes: false,
    // The run's client and worker here convert without it; the services only need one to be wired.
    codec: new PayloadEncryption(secretBoxFromConfig(config)),
  };
  const { services } = wire({
    config,
    logger,
    store,
    temporal,
    python,
    metrics: createMetrics(),
    engine: new EngineHealth(),
    tracing: noTracing,
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: workflowBundlePath },
    activities: createActivities({ config, logger, python, services, tracing: noTracing }),
    shutdownGraceTime: '2s',
  });
  const record = await worker.runUntil(async () => {
    const handle = await startWorkflow(env.client.workflow, generationRunContract, {
      taskQueue,
      workflowId: generationWorkflowId(workflow.id),
      args: [input],
    });
    await env.sleep('26 minutes');
    return handle.result();
  });
  expect(record.status).toBe('cancelled');
  expect(record.progress).toBe(1);
  expect(record.tasks_by_agent.find((t) => t.specialty === 'triage')?.status).toBe('cancelled');
  expect(record.tasks_by_agent.at(-1)?.result_summary).toContain('run time limit (25 minutes)');
  // Two attempts (the second 15 minutes after the first), then the limit.
  expect(llm.count('triage')).toBe(2);
  const stored = await runs.find(workflow.id, runId);
  expect(stored).toMatchObject({ status: 'cancelled', finalized: true });
});
