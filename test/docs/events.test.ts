import { afterAll, beforeAll, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { refused, startTestService, type TestResponse, type TestService } from '../support/harness.js';
import { Receiver } from '../callbacks/receiver.js';
import { createWorkflow, startCase, waitForEnd } from '../cases/support.js';
import { py, textChain } from '../support/graphs.js';
import { documentedFields, fill as fillIn, walkthrough, type Step } from './walkthrough.js';

let svc: TestService;
let receiver: Receiver;

beforeAll(async () => {
  svc = await startTestService();
  receiver = new Receiver();
  await receiver.listen();
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.stop();
});

it('runs the walk-through of docs/events.md as written', async () => {
  const steps = walkthrough('events.md');
  expect(steps.map((s) => `${s.method} ${s.path}`)).toEqual([
    'POST /api/v1/subscriptions',
    'GET /api/v1/subscriptions/{subscriptionId}/deliveries',
    'POST /api/v1/subscriptions/{subscriptionId}/deliveries/{deliveryId}/redeliver',
    'POST /api/v1/subscriptions/{subscriptionId}/rotate-secret',
    'PATCH /api/v1/subscriptions/{subscriptionId}',
    'PATCH /api/v1/subscriptions/{subscriptionId}',
    'GET /api/v1/subscriptions?workspaceId={workspaceId}',
    'DELETE /api/v1/subscriptions/{subscriptionId}',
  ]);
  const failing = (await createWorkflow(svc, textChain('Boom', py('raise ValueError("boom")')), 'failing')).workflowId;
  const values: Record<string, string> = { workspaceId: svc.workspaceId, receiverUrl: receiver.url };
  const fill = (text: string) => fillIn(text, values);
  const send = (step: Step): Promise<TestResponse> =>
    svc.request(step.method, fill(step.path), {
      ...(step.body === undefined ? {} : { body: JSON.parse(fill(step.body)) as unknown }),
    });

  let secret = '';
  for (const step of steps) {
    let answer = await send(step);
    if (step.path.endsWith('/deliveries')) {
      // The doc's case failed meanwhile: its delivery is in the log once the receiver answered.
      await expect
        .poll(
          async () => {
            answer = await send(step);
            return (answer.body.deliveries as Array<{ status: string }>)[0]?.status;
          },
          { timeout: 15_000 },
        )
        .toBe('delivered');
      values.deliveryId = (answer.body.deliveries as Array<{ id: string }>)[0]?.id ?? '';
    }
    expect(answer.status, `${step.method} ${step.path}: ${answer.text}`).toBeLessThan(300);
    if (step.expected) expect(Object.keys(answer.body).sort()).toEqual(documentedFields(step));

    if (step.method === 'POST' && step.path === '/api/v1/subscriptions') {
      values.subscriptionId = answer.body.id as string;
      secret = answer.body.secret as string;
      // What the doc describes next: a case of the workspace fails, no callbackUrl.
      const caseId = await startCase(svc, failing, { text: 'x' });
      expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
      const call = receiver.received[0]!;
      expect(new Webhook(secret).verify(call.body, call.headers as Record<string, string>)).toMatchObject({
        type: 'case.failed',
        data: { caseId, status: 'FAILED' },
      });
      expect(call.headers['webhook-id']).toBe(`${caseId}-${values.subscriptionId}`);
    }
    if (step.path.endsWith('/redeliver')) {
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(2);
      expect(
        new Webhook(secret).verify(receiver.received[1]!.body, receiver.received[1]!.headers as Record<string, string>),
      ).toMatchObject({ type: 'case.failed' });
    }
    if (step.method === 'GET' && step.path.includes('?workspaceId=')) {
      expect(answer.body.subscriptions).toMatchObject([{ id: values.subscriptionId, enabled: true }]);
      expect(answer.text).not.toContain('whsec_');
    }
  }
  await refused(
    svc.client.GET('/api/v1/subscriptions/{subscriptionId}', {
      params: { path: { subscriptionId: String(values.subscriptionId) } },
    }),
    404,
  );
});
