import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createWorkflow } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { startTestService, unendingRateWindowMs, type TestResponse, type TestService } from '../support/harness.js';
import { newCaller } from '../support/keys.js';

const limit = 3;

/** 429 in the contract's error body, with Retry-After and the organization's spent RateLimit. */
function expectLimited(res: TestResponse, path: string): void {
  expect(res.status, res.text).toBe(429);
  expect(res.body).toMatchObject({ statusCode: 429, errorCode: 'RATE_LIMITED', path });
  expect(res.body.message).toContain('over the organization limit');
  expect(Date.parse(String(res.body.timestamp))).not.toBeNaN();
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(res.headers.get('ratelimit')).toMatch(/^"organization";r=0;t=\d+$/);
}

describe("an organization's API intake over cases.intakeRateLimit", () => {
  let svc: TestService;
  const echo = () => {
    const g = new Graph();
    g.edge(g.input([{ name: 'text' }]), g.output([{ name: 'text' }]));
    return g;
  };
  beforeAll(async () => {
    svc = await startTestService({
      config: { cases: { intakeRateLimit: { perOrganization: limit, windowMs: unendingRateWindowMs } } },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('is off unless configured', () => {
    expect(loadConfig({}).cases.intakeRateLimit).toEqual({ perOrganization: null, windowMs: 1000 });
    const set = loadConfig({ CASEFLOW_CASE_INTAKE_RATE_LIMIT: '50', CASEFLOW_CASE_INTAKE_RATE_WINDOW_MS: '2000' });
    expect(set.cases.intakeRateLimit).toEqual({ perOrganization: 50, windowMs: 2000 });
  });

  it('refuses initiates, then executes, past the limit (each its own budget, the job paths included); another organization goes on', async () => {
    const { workflowId } = await createWorkflow(svc, echo(), 'intake');
    const initiate = (path: '/api/v1/case' | '/job/initiate', key?: string, id = workflowId) =>
      svc.request('POST', path, { body: { workflowId: id }, ...(key ? { key } : {}) });
    const caseIds: string[] = [];
    for (let i = 0; i < limit; i++) {
      const res = await initiate(i % 2 ? '/job/initiate' : '/api/v1/case');
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"organization";r=${limit - 1 - i};t=\\d+$`));
      caseIds.push(String(res.body.caseId ?? res.body.jobExecutionId));
    }
    expectLimited(await initiate('/api/v1/case'), '/api/v1/case');
    expectLimited(await initiate('/job/initiate'), '/job/initiate');

    const body = { inputs: { text: 'x' } };
    for (const caseId of caseIds) {
      const res = await svc.request('POST', `/api/v1/case/${caseId}/execute`, { body });
      expect(res.status, res.text).toBe(202);
    }
    // Counted before the case is looked up: a flood costs no read, so an unknown case is 429 as well.
    const unknown = `/api/v1/case/${randomUUID()}/execute`;
    expectLimited(await svc.request('POST', unknown, { body }), unknown);
    const job = { ...body, jobExecutionId: randomUUID() };
    expectLimited(await svc.request('POST', '/job/execute', { body: job }), '/job/execute');

    const other = await newCaller(svc, ['workflow:full', 'case:full']);
    const g = echo();
    const theirs = await svc.request('POST', '/api/v1/workflow', {
      key: other.key,
      headers: { 'x-workspace-id': other.workspaceId },
      body: { name: 'intake', activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    });
    expect(theirs.status, theirs.text).toBe(201);
    const started = await initiate('/api/v1/case', other.key, String(theirs.body.workflowId));
    expect(started.status, started.text).toBe(201);
    expect(started.headers.get('ratelimit')).toMatch(new RegExp(`^"organization";r=${limit - 1};t=\\d+$`));
    const executed = await svc.request('POST', `/api/v1/case/${String(started.body.caseId)}/execute`, {
      key: other.key,
      body,
    });
    expect(executed.status, executed.text).toBe(202);
  });
});
