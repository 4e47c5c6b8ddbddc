import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { deliver, sign } from '../hooks/support.js';
import { startTestService, http, type TestService } from '../support/harness.js';
import { decodedHistoryText } from '../support/history.js';
import { newKey, secretOf } from '../support/keys.js';
import { approvalGraph } from '../tasks/graphs.js';
import { taskOf } from '../tasks/support.js';

/**
 * Every secret the new capabilities hand out (the creating API key, a hook's secret, a subscription's and the
 * workspace's signing secrets, a task's completion link) after each has been used by the work Temporal runs:
 * none is in any workflow history of the namespace, payloads decoded as the service reads them, nor in clear
 * in the database file.
 */
let svc: TestService;
let receiver: Receiver;
beforeAll(async () => {
  svc = await startTestService();
  receiver = new Receiver();
  await receiver.listen();
});
afterAll(async () => {
  await receiver?.close();
  await svc?.stop();
});

describe('secrets and Temporal histories', () => {
  it('keeps every secret out of every history and out of the database in clear', { timeout: 120_000 }, async () => {
    const { key } = await newKey(svc, ['workflow:full', 'case:full']);
    const as = { key };
    const { graph } = approvalGraph({ title: 'Approve', instructions: 'Approve?', assignee: { type: 'workspace' } });
    const { workflowId } = await createWorkflow(svc, graph, 'secrets');

    const subscription = await svc.request('POST', '/api/v1/subscriptions', {
      ...as,
      body: { workspaceId: svc.workspaceId, url: receiver.url, eventTypes: ['case.completed'] },
    });
    expect(subscription.status, subscription.text).toBe(201);
    const workspaceSecret = await svc.request('GET', `/api/v1/workspace/${svc.workspaceId}/webhook-secret`, as);
    expect(workspaceSecret.status, workspaceSecret.text).toBe(200);
    const hook = await svc.request('POST', `/api/v1/workflow/${workflowId}/hooks`, {
      ...as,
      body: { name: 'secret hook', scheme: 'standard-webhooks' },
    });
    expect(hook.status, hook.text).toBe(201);
    const schedule = await svc.request('POST', `/api/v1/workflow/${workflowId}/schedules`, {
      ...as,
      body: { cron: '0 0 1 1 *', inputs: { amount: 1 } },
    });
    expect(schedule.status, schedule.text).toBe(201);
    expect(
      (await svc.request('POST', `/api/v1/schedules/${String(schedule.body.scheduleId)}/trigger`, as)).status,
    ).toBe(202);

    // A case started by a signed delivery, decided through its completion link, ending with a callback and an event.
    const body = JSON.stringify({ amount: 2 });
    const delivered = await deliver(
      svc,
      String(hook.body.hookId),
      body,
      sign.standardWebhooks(String(hook.body.secret), body),
    );
    expect(delivered.status, delivered.text).toBe(202);
    const hooked = String(delivered.body.caseId);
    const started = await startCase(svc, workflowId, { amount: 3 }, { callbackUrl: receiver.url });
    const secrets: Record<string, string> = {
      'API key': secretOf(key),
      'hook secret': String(hook.body.secret).slice('whsec_'.length),
      'subscription secret': String(subscription.body.secret).replace(/^whsec_/, ''),
      'workspace secret': String(workspaceSecret.body.secret).replace(/^whsec_/, ''),
    };
    for (const caseId of [hooked, started]) {
      const { taskId } = await taskOf(svc, caseId);
      const link = await svc.request('POST', `/api/v1/tasks/${taskId}/link`, as);
      expect(link.status, link.text).toBe(201);
      secrets[`link of ${caseId}`] = String(link.body.url).split('/').at(-1) ?? '';
      const done = await http(String(link.body.url), 'POST', {
        key: null,
        rawBody: 'approved=true',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(done.status).toBe(200);
      expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    }
    // The callback and both events were sent (signed with the secrets above).
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);

    const { client, codec } = svc.service.context.temporal;
    let histories = 0;
    // The search can find what is there: the hook's case is in its own run's history.
    let hookedSeen = false;
    // Only this service's runs: other test files share the dev server, under master keys of their own.
    const query = `TaskQueue = '${svc.taskQueue}'`;
    // The engine writes visibility rows a moment after a run changes (history.visibilityProcessorMaxPollRPS).
    await expect
      .poll(async () => (await client.workflow.count(query)).count, { timeout: 30_000 })
      .toBeGreaterThanOrEqual(6);
    for await (const run of client.workflow.list({ query })) {
      const text = await decodedHistoryText(
        await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory(),
        codec,
      );
      histories += 1;
      hookedSeen ||= text.includes(hooked);
      for (const [name, secret] of Object.entries(secrets))
        expect(text.includes(secret), `${name} in the history of ${run.workflowId}`).toBe(false);
    }
    // Case runs, the firing, callback and event deliveries at least.
    expect(histories).toBeGreaterThanOrEqual(6);
    expect(hookedSeen).toBe(true);

    const { store } = svc.service.context;
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
    const file = readFileSync(store.location).toString('latin1');
    expect(file.includes(hooked)).toBe(true);
    for (const [name, secret] of Object.entries(secrets))
      expect(file.includes(secret), `${name} in the database`).toBe(false);
  });
});
