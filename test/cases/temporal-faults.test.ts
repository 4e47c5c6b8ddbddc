import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logging/logger.js';
import { freePort } from '../../src/net/free-port.js';
import { temporalCliPath } from '../../src/temporal/binaries.js';
import { devServerEngine, startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { isTemporalUnavailable } from '../../src/temporal/unavailable.js';
import { refused, startTestService, type TestService } from '../support/harness.js';
import { caseStatus, createWorkflow, execute, initiate, startCase, waitForEnd } from './support.js';
import { sleeper } from '../support/graphs.js';

describe('cancel of a run Temporal no longer has', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('answers 409 when the run was terminated behind the service, and changes nothing', async () => {
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'x' });
    await svc.service.context.temporal.client.workflow
      .getHandle(`case-${caseId}`)
      .terminate('test: closed behind the service');
    const res = await refused(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 409);
    expect(res).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
  });

  it('answers 409 when the run does not exist at all', async () => {
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'y' });
    await svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`).terminate('test');
    // The row names a run id Temporal never had: the vanished-run case.
    await svc.service.context.store.db
      .updateTable('cases')
      .set({ temporal_workflow_id: `gone-${randomUUID()}` })
      .where('id', '=', caseId)
      .execute();
    const res = await refused(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 409);
    expect(res).toMatchObject({ statusCode: 409, errorCode: 'CONFLICT' });
  });
});

describe('reconciling cases whose run ended unrecorded', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { cases: { reconcileIntervalMs: 300 } } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('closes a case whose run was terminated behind the service as FAILED, and leaves finished cases alone', async () => {
    const done = await startCase(svc, (await createWorkflow(svc, sleeper(0))).workflowId, { text: 'kept' });
    await waitForEnd(svc, done);
    const wf = await createWorkflow(svc, sleeper(20));
    const caseId = await startCase(svc, wf.workflowId, { text: 'x' });
    await svc.service.context.temporal.client.workflow
      .getHandle(`case-${caseId}`)
      .terminate('test: closed behind the service');
    let status: Record<string, unknown> = {};
    for (let i = 0; i < 100 && status.status !== 'FAILED'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await caseStatus(svc, caseId);
    }
    expect(status.status).toBe('FAILED');
    expect(JSON.stringify(status)).toContain('terminated');
    expect((await caseStatus(svc, done)).status).toBe('COMPLETED');
  }, 30_000);
});

/**
 * An API-only service (no worker polling a server that is about to go away) on a dedicated in-memory dev server at a
 * fixed port, so the test can stop the server and start it again at the same address. The server runs with the
 * engine's settings from temporal.devServer, as the service's own does.
 */
function faultFixture(config: Record<string, unknown>) {
  const fixture = {
    port: 0,
    dataDir: '',
    server: undefined as DevServer | undefined,
    svc: undefined as TestService | undefined,
  };
  const startServer = async () => {
    fixture.server = await startDevServer({
      cliPath: temporalCliPath(process.env.TEMPORAL_CLI_PATH),
      dataDir: fixture.dataDir,
      port: fixture.port,
      uiPort: 0,
      ui: false,
      namespace: 'default',
      startTimeoutMs: 90_000,
      logger: createLogger('warn'),
      // The engine as the service runs its embedded server by default (as test/support/global-setup.ts).
      ...devServerEngine(loadConfig({}).temporal.devServer),
    });
  };
  beforeAll(async () => {
    fixture.dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-temporal-fault-'));
    fixture.port = await freePort();
    await startServer();
    fixture.svc = await startTestService({ role: 'api', temporalAddress: `127.0.0.1:${fixture.port}`, config });
  }, 120_000);
  afterAll(async () => {
    await fixture.svc?.stop().catch(() => undefined);
    await fixture.server?.stop().catch(() => undefined);
    rmSync(fixture.dataDir, { recursive: true, force: true });
  });
  return {
    svc: () => fixture.svc as TestService,
    stopServer: () => fixture.server?.stop(),
    serverPid: () => {
      if (!fixture.server) throw new Error('the dev server is not running');
      return fixture.server.pid;
    },
    startServer,
  };
}

describe('execute while Temporal is unreachable', () => {
  const fault = faultFixture({ temporal: { probeIntervalMs: 200 } });

  it('answers 503 with Retry-After at once once the engine is known down, and leaves the case PENDING', async () => {
    const svc = fault.svc();
    const wf = await createWorkflow(svc, sleeper(1));
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    await fault.stopServer();
    for (let i = 0; i < 100 && svc.service.engine.isUp(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(svc.service.engine.isUp()).toBe(false);
    const started = performance.now();
    const res = await execute(svc, caseId, { inputs: { text: 'z' } });
    expect(performance.now() - started).toBeLessThan(1500);
    expect(res.status, res.text).toBe(503);
    expect(res.body).toMatchObject({ statusCode: 503, errorCode: 'SERVICE_UNAVAILABLE' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await caseStatus(svc, caseId)).status).toBe('PENDING');
  }, 60_000);
});

describe('an engine slow to answer', () => {
  // Pinged every 200 ms: a probe that took a late answer for a dead engine marks it down early in the stall.
  const fault = faultFixture({ temporal: { probeIntervalMs: 200 } });

  it('is not taken for a dead one: an execute during a stall waits for it and is accepted', async () => {
    const svc = fault.svc();
    const wf = await createWorkflow(svc, sleeper(1));
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    const pid = fault.serverPid();
    // Frozen, the server answers nothing for 2.5 s, as a loaded one answers late under a burst.
    process.kill(pid, 'SIGSTOP');
    let res: Awaited<ReturnType<typeof execute>>;
    try {
      await new Promise((r) => setTimeout(r, 2500));
      expect(svc.service.engine.isUp()).toBe(true);
      const answer = execute(svc, caseId, { inputs: { text: 's' } });
      await new Promise((r) => setTimeout(r, 500));
      process.kill(pid, 'SIGCONT');
      res = await answer;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(res.status, res.text).toBe(202);
    const run = await svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`).describe();
    expect(run.status.name).toBe('RUNNING');
  }, 60_000);

  it('a start our own deadline cut short counts as the engine not answering, not as a refusal', async () => {
    const svc = fault.svc();
    const { client, taskQueue } = svc.service.context.temporal;
    const pid = fault.serverPid();
    process.kill(pid, 'SIGSTOP');
    let failure: unknown;
    try {
      await client.withDeadline(Date.now() + 300, () =>
        client.workflow.start('caseRun', { taskQueue, workflowId: `deadline-${randomUUID()}`, args: [] }),
      );
    } catch (err) {
      failure = err;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // An execute met by this answered 500 and put its case back to PENDING although its start may still land.
    expect(failure).toBeInstanceOf(Error);
    expect(isTemporalUnavailable(failure)).toBe(true);
  }, 60_000);
});

describe('an execute whose start has no answer', () => {
  // The probe would notice the outage before the execute: slowed down here so the start itself meets it.
  const fault = faultFixture({ temporal: { probeIntervalMs: 600_000 }, cases: { resumeUnstartedAfterMs: 100 } });

  it('keeps the case accepted (never "stays PENDING") and starts its one run once the engine is back', async () => {
    const svc = fault.svc();
    const wf = await createWorkflow(svc, sleeper(1));
    const caseId = await initiate(svc, { workflowId: wf.workflowId });
    await fault.stopServer();
    const res = await execute(svc, caseId, { inputs: { text: 'u' } });
    expect(res.status, res.text).toBe(202);
    expect(res.body.status).toBe('RUNNING');
    expect(svc.service.engine.isUp()).toBe(false);
    const row = () =>
      svc.service.context.store.db
        .selectFrom('cases')
        .select(['status', 'temporal_run_id'])
        .where('id', '=', caseId)
        .executeTakeFirstOrThrow();
    expect(await row()).toEqual({ status: 'RUNNING', temporal_run_id: null });
    // Executing again is refused as for any started case: never a second run.
    expect((await execute(svc, caseId, { inputs: { text: 'u' } })).status).toBe(409);

    await fault.startServer();
    let linked: string | null = null;
    for (let i = 0; i < 300 && !linked; i++) {
      await new Promise((r) => setTimeout(r, 100));
      linked = (await row()).temporal_run_id;
    }
    expect(linked).toBeTruthy();
    const run = await svc.service.context.temporal.client.workflow.getHandle(`case-${caseId}`).describe();
    expect(run.runId).toBe(linked);
  }, 120_000);
});
