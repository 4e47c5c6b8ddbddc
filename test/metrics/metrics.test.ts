import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { floatChain, py, sleeper } from '../support/graphs.js';
import { createClient } from '../../src/client/index.js';
import { answered, http, refused, startTestService, type TestService } from '../support/harness.js';
import { clientFor, newCaller } from '../support/keys.js';
import { freePort } from '../../src/net/free-port.js';
import { parseSamples, valueOf, type Sample } from '../support/prometheus.js';

describe('case metrics on /metrics', () => {
  let svc: TestService;
  const receiver = new Receiver();
  let receiverUrl = '';
  beforeAll(async () => {
    svc = await startTestService();
    receiverUrl = `http://127.0.0.1:${await receiver.listen()}`;
  });
  afterAll(async () => {
    await svc?.stop();
    await receiver.close();
  });

  async function scrape(): Promise<Sample[]> {
    const r = await http(`${svc.url}/metrics`, 'GET');
    expect(r.status).toBe(200);
    return parseSamples(r.text);
  }

  it('counts cases started and finished by workflow and status, with durations by case and node kind', async () => {
    const { graph } = floatChain(
      'Halve',
      py('if inputs["a"] == 0:\n    raise ValueError("zero")\nreturn {"b": inputs["a"] / 2}'),
    );
    const wf = await createWorkflow(svc, graph, 'metered');
    receiver.respondWith((call, res) => {
      res.statusCode = call.body.includes('"FAILED"') ? 410 : 200;
      res.end();
    });
    const cases = [
      await startCase(svc, wf.workflowId, { a: 4 }, { callbackUrl: `${receiverUrl}/hook` }),
      await startCase(svc, wf.workflowId, { a: 6 }),
      await startCase(svc, wf.workflowId, { a: 0 }, { callbackUrl: `${receiverUrl}/hook` }),
    ];
    const ends = [];
    for (const caseId of cases) ends.push((await waitForEnd(svc, caseId)).status);
    expect(ends).toEqual(['COMPLETED', 'COMPLETED', 'FAILED']);

    const samples = await scrape();
    expect(valueOf(samples, 'caseflow_cases_started_total')).toBe(3);
    // One at a time, the worker has free workflow-task slots: every start is eager (the first task comes back with it).
    expect(valueOf(samples, 'caseflow_case_run_starts_total', { start: 'eager' })).toBe(3);
    expect(valueOf(samples, 'caseflow_case_run_starts_total', { start: 'fallback' })).toBeUndefined();
    // The slots an eager start needs: temporal.workflowTaskSlots reaches the worker.
    expect(svc.service.worker?.().options.tuner.workflowTaskSlotSupplier).toEqual({
      type: 'fixed-size',
      numSlots: svc.service.context.config.temporal.workflowTaskSlots,
    });
    expect(valueOf(samples, 'caseflow_cases_finished_total', { status: 'COMPLETED' })).toBe(2);
    expect(valueOf(samples, 'caseflow_cases_finished_total', { status: 'FAILED' })).toBe(1);
    expect(valueOf(samples, 'caseflow_case_duration_seconds_count', { status: 'COMPLETED' })).toBe(2);
    expect(valueOf(samples, 'caseflow_case_duration_seconds_sum')).toBeGreaterThan(0);
    const python = { kind: 'python_code' };
    expect(valueOf(samples, 'caseflow_node_duration_seconds_count', { ...python, status: 'completed' })).toBe(2);
    expect(valueOf(samples, 'caseflow_node_duration_seconds_count', { ...python, status: 'failed' })).toBe(1);
    expect(valueOf(samples, 'caseflow_node_duration_seconds_count', { kind: 'input', status: 'completed' })).toBe(3);
    // The failed case never reached its output node: nodes that did not run have no duration.
    expect(valueOf(samples, 'caseflow_node_duration_seconds_count', { kind: 'output' })).toBe(2);
    // The first callback was delivered; the failed case's receiver answered 410 Gone, which gives up at once.
    expect(valueOf(samples, 'caseflow_callback_attempts_total', { outcome: 'delivered' })).toBe(1);
    expect(valueOf(samples, 'caseflow_callback_attempts_total', { outcome: 'failed' })).toBe(1);
    expect(valueOf(samples, 'caseflow_callback_failures_total')).toBe(1);
  });

  it('names no tenant: an anonymous scrape shows no workflow, organization or workspace id, only bounded labels', async () => {
    const wf = await createWorkflow(svc, floatChain('Halve', py('return {"b": inputs["a"] / 2}')).graph, 'named');
    expect((await waitForEnd(svc, await startCase(svc, wf.workflowId, { a: 2 }))).status).toBe('COMPLETED');
    const r = await http(`${svc.url}/metrics`, 'GET');
    expect(r.status).toBe(200);
    for (const id of [wf.workflowId, svc.organizationId, svc.workspaceId]) expect(r.text).not.toContain(id);
    const labels = new Set(parseSamples(r.text).flatMap((s) => Object.keys(s.labels)));
    for (const tenantLabel of ['workflow_id', 'organization_id', 'workspace_id', 'case_id'])
      expect(labels).not.toContain(tenantLabel);
  });

  it("gives a key its own organization's figures per workflow, and another organization's key nothing of them", async () => {
    const wf = await createWorkflow(svc, floatChain('Halve', py('return {"b": inputs["a"] / 2}')).graph, 'counted');
    const before = new Date(Date.now() - 1000).toISOString();
    for (const a of [1, 2])
      expect((await waitForEnd(svc, await startCase(svc, wf.workflowId, { a }))).status).toBe('COMPLETED');
    const stats = (client = svc.client, query: { workspaceId?: string; workflowId?: string } = {}) =>
      client.GET('/api/v1/stats/cases', { params: { query: { from: before, ...query } } });
    const own = await answered(stats(), 200);
    const mine = own.workflows.find((w) => w.workflowId === wf.workflowId);
    expect(mine).toMatchObject({ workspaceId: svc.workspaceId, cases: 2, byStatus: { COMPLETED: 2 } });
    expect(mine?.runSeconds).toMatchObject({ count: 2 });

    // The attacker: another organization's key with Case: Read, asking by our workspace and workflow too.
    const other = clientFor(svc, (await newCaller(svc, ['case:read', 'workflow:read'], { verified: false })).key);
    for (const query of [{}, { workspaceId: svc.workspaceId }, { workflowId: wf.workflowId }]) {
      const theirs = await answered(stats(other, query), 200);
      expect(theirs.workflows).toEqual([]);
      expect(JSON.stringify(theirs)).not.toContain(wf.workflowId);
    }
    // Case: Read is the grant; a window over 31 days is a 400.
    await refused(stats(clientFor(svc, (await newCaller(svc, ['workflow:read'], { verified: false })).key)), 403);
    await refused(
      svc.client.GET('/api/v1/stats/cases', {
        params: { query: { from: '2026-01-01T00:00:00Z', to: '2026-03-01T00:00:00Z' } },
      }),
      400,
    );
  });

  it('reports the Python pool: busy servers while a node runs, an empty queue at rest', async () => {
    const wf = await createWorkflow(svc, sleeper(4), 'sleeper');
    const caseId = await startCase(svc, wf.workflowId, { text: 'zz' });
    let busy = 0;
    for (let i = 0; i < 200 && busy === 0; i++) {
      busy = valueOf(await scrape(), 'caseflow_python_pool_busy_servers') ?? 0;
      if (busy === 0) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(busy).toBeGreaterThanOrEqual(1);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const rest = await scrape();
    expect(valueOf(rest, 'caseflow_python_pool_busy_servers')).toBe(0);
    expect(valueOf(rest, 'caseflow_python_pool_queue_depth')).toBe(0);
  });

  it('the Grafana dashboard in docs/ charts only metrics this service exports, and each of ours', () => {
    const dashboard = readFileSync(path.join(import.meta.dirname, '../../docs/grafana-dashboard.json'), 'utf8');
    const used = new Set(
      [...dashboard.matchAll(/caseflow_\w+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, '')),
    );
    const { registry } = svc.service.context.metrics;
    const ours = registry
      .getMetricsAsArray()
      .map((m) => m.name)
      .filter((name) => name.startsWith('caseflow_'));
    for (const name of used) expect(ours, name).toContain(name);
    expect(ours.filter((name) => !used.has(name))).toEqual([]);
  });
});

describe('what overload makes a case do twice (docs/performance.md#overload-work-done-twice)', () => {
  let svc: TestService;
  const slow = new Receiver((_call, res) => setTimeout(() => res.end('late'), 3000));
  const refusing = new Receiver((_call, res) => {
    res.statusCode = 503;
    res.end();
  });
  beforeAll(async () => {
    svc = await startTestService({
      config: {
        callbacks: { timeoutMs: 1000, initialIntervalMs: 500, maximumIntervalMs: 500, maxElapsedMs: 2000 },
        temporal: { caseWorkflowTaskTimeoutMs: 45_000 },
      },
    });
    await Promise.all([slow.listen(), refusing.listen()]);
  });
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([slow.close(), refusing.close()]);
  });

  it('counts each first callback attempt that starts a retry workflow by why, and gives case runs the configured task timeout', async () => {
    const wf = await createWorkflow(svc, floatChain('Halve', py('return {"b": inputs["a"] / 2}')).graph, 'twice');
    const nobody = `http://127.0.0.1:${await freePort()}/hook`;
    const cases = [];
    for (const callbackUrl of [slow.url, refusing.url, nobody])
      cases.push(await startCase(svc, wf.workflowId, { a: 2 }, { callbackUrl }));
    for (const caseId of cases) expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const misses = (reason: string) => async () =>
      valueOf(
        parseSamples((await http(`${svc.url}/metrics`, 'GET')).text),
        'caseflow_callback_first_attempt_misses_total',
        {
          reason,
        },
      );
    for (const reason of ['timeout', 'answered', 'error'])
      await expect.poll(misses(reason), { timeout: 15_000 }).toBe(1);

    const { raw } = await svc.service.context.temporal.client.workflow.getHandle(`case-${cases[0]}`).describe();
    expect(Number(raw.executionConfig?.defaultWorkflowTaskTimeout?.seconds)).toBe(45);
  });
});

describe('/metrics on a listener of its own, behind a token', () => {
  const token = 'metrics-token-0123456789';
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { metrics: { token, port: 0, host: '127.0.0.1' } } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('serves metrics only there, and only with the token; the API port keeps health and readiness', async () => {
    const metricsUrl = svc.service.metricsUrl;
    expect(metricsUrl).toBeDefined();
    expect(metricsUrl).not.toBe(svc.url);
    expect((await http(`${svc.url}/metrics`, 'GET')).status).toBe(404);
    const anonymous = createClient({ baseUrl: svc.url });
    await answered(anonymous.GET('/healthz'), 200);
    await answered(anonymous.GET('/readyz'), 200);
    // The metrics listener serves no route of the document: raw requests there.

    const scrape = (authorization?: string) =>
      http(`${metricsUrl}/metrics`, 'GET', authorization ? { headers: { authorization } } : {});
    for (const wrong of [undefined, 'Bearer wrong', `Bearer ${token}x`, token]) {
      const res = await scrape(wrong);
      expect(res.status, String(wrong)).toBe(401);
      expect(res.text).not.toContain('caseflow_');
    }
    const ok = await scrape(`Bearer ${token}`);
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('caseflow_http_requests_total');
    expect((await http(`${metricsUrl}/api/v1/me`, 'GET', { key: svc.key })).status).toBe(404);
  });
});
