import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DeliverySweep } from '../../src/callbacks/delivery-sweep.js';
import { namespaceRetentionMs, type CallbackDeliveryGateway } from '../../src/temporal/gateways/callback-deliveries.js';
import { unstartedRedelivery } from './support.js';

const yearAgo = new Date(Date.now() - 365 * 86_400_000).toISOString();

/** The sweep over one old delivery, against a Temporal that states the given retention and knows no workflow. */
async function sweepOld(retentionMs: number | undefined): Promise<{ started: string[]; failed: string[] }> {
  const started: string[] = [];
  const failed: string[] = [];
  const deliveries: CallbackDeliveryGateway = {
    start: (workflowId) => {
      started.push(workflowId);
      return Promise.resolve('started');
    },
    state: () => Promise.resolve('absent'),
    retentionMs: () => Promise.resolve(retentionMs),
  };
  const row = unstartedRedelivery(yearAgo);
  await new DeliverySweep({
    repo: {
      overdueDeliveries: () => Promise.resolve([row]),
      failPending: (delivery, reason) => {
        failed.push(reason);
        return Promise.resolve(delivery.id === row.id);
      },
    },
    tenancy: { findWorkspace: (id) => Promise.resolve({ id, organizationId: randomUUID(), name: 'w', createdAt: '' }) },
    deliveries,
    runs: { closedRun: () => Promise.resolve(undefined) },
    graceMs: 0,
    batch: 10,
    logger: pino({ level: 'silent' }),
    registry: new Registry(),
  }).sweep();
  return { started, failed };
}

describe("the delivery sweep and the namespace's retention", () => {
  it('takes a delivery older than the retention whose workflow Temporal does not know as forgotten', async () => {
    const { started, failed } = await sweepOld(86_400_000);
    expect(started).toEqual([]);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/longer than Temporal keeps/);
  });

  it('starts it when the namespace states no retention, instead of failing every overdue delivery', async () => {
    const { started, failed } = await sweepOld(undefined);
    expect(started).toHaveLength(1);
    expect(failed).toEqual([]);
  });

  it('reads a namespace that states no retention as unknown, not as one that forgets at once', () => {
    expect(namespaceRetentionMs(undefined)).toBeUndefined();
    expect(namespaceRetentionMs({})).toBeUndefined();
    expect(namespaceRetentionMs({ seconds: 0, nanos: 0 })).toBeUndefined();
    expect(namespaceRetentionMs({ seconds: 86_400, nanos: 0 })).toBe(86_400_000);
  });
});
