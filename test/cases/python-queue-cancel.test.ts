import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answered, startTestService, type TestService } from '../support/harness.js';
import { createWorkflow, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/**
 * A Python call whose case gave up while the call waited for a runner never runs: on the real
 * stack, one pool server of four slots (three per organization), a case of four parallel Python
 * nodes: three run for 9.5 s, the fourth waits in the pool's queue; the case is cancelled.
 *
 * The cancel reaches the nodes' local activities only at the workflow task's next heartbeat
 * (~8 s: the task stays open while its local activities run), and a queued call leaves at the
 * latest when it could no longer run its whole timeout before its activity's deadline (~9 s):
 * either way it leaves before a slot frees, and the cancelled case does not try it again.
 */
const PARALLEL = 4;
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ config: { python: { poolSize: 1, warmServers: 1 } } });
});
afterAll(async () => {
  await svc?.stop();
});

/** input → four parallel Python nodes sleeping 9.5 s → output. */
function fanOut(): Graph {
  const graph = new Graph();
  const input = graph.input([{ name: 'a', type: 'float' }]);
  const output = graph.output([{ name: 'b0', type: 'float' }]);
  for (let i = 0; i < PARALLEL; i++) {
    const id = graph.python(
      `P${i}`,
      `import time\n${py(`time.sleep(9.5)\nreturn {"b${i}": inputs["a"]}`)}`,
      [{ name: 'a', type: 'float' }],
      [{ name: `b${i}`, type: 'float' }],
    );
    graph.edge(input, id);
    graph.edge(id, output);
  }
  return graph;
}

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: pool ${JSON.stringify(svc.service.context.python.stats())}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('queued Python calls of a case that gave up', () => {
  it('leave the queue when the case is cancelled and never run, while the running ones finish', async () => {
    const pool = svc.service.context.python;
    const wf = await createWorkflow(svc, fanOut(), 'queued cancel');
    const before = pool.stats();
    const caseId = await startCase(svc, wf.workflowId, { a: 1 });
    await until('three calls running and one queued', () => {
      const s = pool.stats();
      return s.dispatched - before.dispatched === PARALLEL - 1 && s.queued === 1;
    });

    await answered(svc.client.POST('/api/v1/case/{caseId}/cancel', { params: { path: { caseId } } }), 200);
    const left = (): number => {
      const { shed } = pool.stats();
      return shed.cancelled + shed.deadline - (before.shed.cancelled + before.shed.deadline);
    };
    await until('the queued call to leave the queue', () => left() === 1);
    // It left before any running call ended: no slot was free for it.
    expect(pool.stats().dispatched - before.dispatched).toBe(PARALLEL - 1);
    expect((await waitForEnd(svc, caseId, 60_000)).status).toBe('CANCELLED');

    // Slots free up as the running calls end; the cancelled case sends the call no more.
    await until('the running calls to end', () => pool.stats().inFlight === 0);
    await new Promise((r) => setTimeout(r, 2000));
    const after = pool.stats();
    expect(after.queued).toBe(0);
    expect(after.dispatched - before.dispatched).toBe(PARALLEL - 1);
    expect(left()).toBe(1);
  }, 120_000);
});
