import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkflow, initiate, startCase, waitForEnd } from '../cases/support.js';
import { Graph } from '../support/graphs.js';
import { clientFor, newCaller, newKey, newWorkspace } from '../support/keys.js';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createPostgresSchema, type PostgresSchema } from '../support/postgres.js';

interface Listed {
  workflows?: Array<Record<string, unknown>>;
  cases?: Array<Record<string, unknown>>;
  nextCursor: string | null;
}

function passThrough(): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  return g;
}

describe.each(['sqlite', 'postgres'] as const)('workflow and case lists on %s', (dialect) => {
  let svc: TestService;
  let schema: PostgresSchema | undefined;
  let second: string;
  let keys: Record<'otherOrg' | 'secondOnly' | 'noGrant', string>;
  const ids: Record<'intake' | 'review' | 'payroll' | 'elsewhere', string> = {
    intake: '',
    review: '',
    payroll: '',
    elsewhere: '',
  };

  async function list(path: string, key?: string): Promise<Listed> {
    const r = await svc.request('GET', path, key ? { key } : {});
    expect(r.status, r.text).toBe(200);
    return r.body as unknown as Listed;
  }
  const names = (l: Listed) => (l.workflows ?? []).map((w) => w.name);

  beforeAll(async () => {
    if (dialect === 'postgres') schema = await createPostgresSchema();
    svc = await startTestService(schema ? { databaseUrl: schema.url } : {});
    second = await newWorkspace(svc);
    keys = {
      otherOrg: (await newCaller(svc, ['case:full', 'workflow:full'])).key,
      secondOnly: (await newKey(svc, ['case:full', 'workflow:full'], { workspaceIds: [second] })).key,
      noGrant: (await newKey(svc, ['file:full'])).key,
    };
    ids.intake = (await createWorkflow(svc, passThrough(), 'Invoice intake')).workflowId;
    const review = await answered(
      svc.client.POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': svc.workspaceId } },
        body: { name: 'invoice REVIEW 100%', activeStatus: 'inactive' },
      }),
      201,
    );
    ids.review = review.workflowId;
    ids.payroll = (await createWorkflow(svc, passThrough(), 'Payroll')).workflowId;
    const elsewhere = await answered(
      clientFor(svc, keys.secondOnly).POST('/api/v1/workflow', {
        params: { header: { 'x-workspace-id': second } },
        body: { name: 'Second workspace flow', activeStatus: 'active' },
      }),
      201,
    );
    ids.elsewhere = elsewhere.workflowId;

    for (let i = 0; i < 3; i++) {
      const caseId = await startCase(svc, ids.payroll, { text: `run ${i}` });
      expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    }
    await initiate(svc, { workflowId: ids.payroll });
    await initiate(svc, { workflowId: ids.intake });
  });
  afterAll(async () => {
    await svc?.stop();
    await schema?.drop();
  });

  it('lists workflows newest first with their version state, filtered by workspace, status and name', async () => {
    const all = await list('/api/v1/workflow');
    expect(names(all)).toEqual(['Second workspace flow', 'Payroll', 'invoice REVIEW 100%', 'Invoice intake']);
    expect(all.nextCursor).toBeNull();
    expect(all.workflows?.find((w) => w.workflowId === ids.review)).toMatchObject({
      workspaceId: svc.workspaceId,
      activeStatus: 'inactive',
      activeVersionNumber: null,
      latestVersionNumber: 1,
    });
    expect(all.workflows?.find((w) => w.workflowId === ids.payroll)).toMatchObject({
      activeStatus: 'active',
      activeVersionNumber: 1,
    });
    expect(names(await list(`/api/v1/workflow?workspaceId=${second}`))).toEqual(['Second workspace flow']);
    expect(names(await list('/api/v1/workflow?status=inactive'))).toEqual(['invoice REVIEW 100%']);
    expect(names(await list(`/api/v1/workflow?status=active&workspaceId=${svc.workspaceId}`))).toEqual([
      'Payroll',
      'Invoice intake',
    ]);
    expect(names(await list('/api/v1/workflow?name=INVOICE'))).toEqual(['invoice REVIEW 100%', 'Invoice intake']);
    // LIKE's wildcards in the search match themselves.
    expect(names(await list(`/api/v1/workflow?name=${encodeURIComponent('100%')}`))).toEqual(['invoice REVIEW 100%']);
    expect(names(await list('/api/v1/workflow?name=_'))).toEqual([]);
  });

  it('walks every page with the cursor, in the order of the whole list', async () => {
    const whole = names(await list('/api/v1/workflow'));
    const walked: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: Listed = await list(`/api/v1/workflow?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.workflows).toHaveLength(1);
      walked.push(...names(page));
      cursor = page.nextCursor;
    } while (cursor);
    expect(walked).toEqual(whole);

    const cases = (await list(`/api/v1/case?workflowId=${ids.payroll}`)).cases ?? [];
    const first = await list(`/api/v1/case?workflowId=${ids.payroll}&limit=3`);
    const rest = await list(`/api/v1/case?workflowId=${ids.payroll}&limit=3&cursor=${first.nextCursor ?? ''}`);
    expect([...(first.cases ?? []), ...(rest.cases ?? [])]).toEqual(cases);
    expect(rest.nextCursor).toBeNull();
  });

  it('lists cases by workflow, status and creation time', async () => {
    const payroll = (await list(`/api/v1/case?workflowId=${ids.payroll}`)).cases ?? [];
    expect(payroll).toHaveLength(4);
    expect(payroll.map((c) => c.createdAt)).toEqual(
      payroll
        .map((c) => c.createdAt)
        .sort()
        .reverse(),
    );
    expect(payroll.map((c) => c.status).sort()).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'PENDING']);
    expect(payroll[0]).toMatchObject({ workflowId: ids.payroll, workspaceId: svc.workspaceId, source: 'api' });

    const completed = (await list('/api/v1/case?status=COMPLETED')).cases ?? [];
    expect(completed.map((c) => c.workflowId)).toEqual([ids.payroll, ids.payroll, ids.payroll]);
    expect(((await list('/api/v1/case?status=PENDING')).cases ?? []).map((c) => c.workflowId).sort()).toEqual(
      [ids.intake, ids.payroll].sort(),
    );

    const all = (await list('/api/v1/case')).cases ?? [];
    expect(all).toHaveLength(5);
    const pivot = String(all[2]?.createdAt);
    const from = (await list(`/api/v1/case?from=${pivot}`)).cases ?? [];
    expect(from.map((c) => c.caseId)).toEqual(all.filter((c) => String(c.createdAt) >= pivot).map((c) => c.caseId));
    const to = (await list(`/api/v1/case?to=${encodeURIComponent(pivot.replace('Z', '+00:00'))}`)).cases ?? [];
    expect(to.map((c) => c.caseId)).toEqual(all.filter((c) => String(c.createdAt) < pivot).map((c) => c.caseId));
  });

  it('shows a key only the workspaces it reads: another organization sees nothing', async () => {
    for (const path of [
      '/api/v1/workflow',
      `/api/v1/workflow?workspaceId=${svc.workspaceId}`,
      '/api/v1/case',
      `/api/v1/case?workflowId=${ids.payroll}`,
      `/api/v1/case?workspaceId=${svc.workspaceId}`,
    ]) {
      const listed = await list(path, keys.otherOrg);
      expect([...(listed.workflows ?? []), ...(listed.cases ?? [])], path).toEqual([]);
    }
    expect(names(await list('/api/v1/workflow', keys.secondOnly))).toEqual(['Second workspace flow']);
    expect(names(await list(`/api/v1/workflow?workspaceId=${svc.workspaceId}`, keys.secondOnly))).toEqual([]);
    expect((await list('/api/v1/case', keys.secondOnly)).cases).toEqual([]);
    for (const path of ['/api/v1/workflow', '/api/v1/case']) {
      const r = await svc.request('GET', path, { key: keys.noGrant });
      expect(r.status, r.text).toBe(403);
      expect(r.body.errorCode).toBe('FORBIDDEN');
    }
  });

  it.each([
    ['/api/v1/workflow?limit=0', 'query.limit'],
    ['/api/v1/workflow?limit=101', 'query.limit'],
    ['/api/v1/workflow?limit=ten', 'query.limit'],
    ['/api/v1/workflow?status=archived', 'query.status'],
    ['/api/v1/workflow?workspaceId=not-a-uuid', 'query.workspaceId'],
    ['/api/v1/workflow?name=', 'query.name'],
    ['/api/v1/workflow?cursor=garbage', 'query.cursor'],
    ['/api/v1/case?status=DONE', 'query.status'],
    ['/api/v1/case?status=FAILED&status=COMPLETED', 'query.status'],
    ['/api/v1/case?workflowId=42', 'query.workflowId'],
    ['/api/v1/case?from=yesterday', 'query.from'],
    ['/api/v1/case?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'query.to'],
    [`/api/v1/case?cursor=${Buffer.from('["x"]').toString('base64url')}`, 'query.cursor'],
  ])('answers 400 VALIDATION_ERROR for %s', async (path, field) => {
    const r = await svc.request('GET', path);
    expect(r.status, r.text).toBe(400);
    expect(r.body.errorCode).toBe('VALIDATION_ERROR');
    expect((r.body.metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field)).toContain(field);
  });
});
