import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { refused, startTestService, type TestService } from '../support/harness.js';
import { audit, caseStatus, createWorkflow, execute, initiate, results, startCase, waitForEnd } from './support.js';
import { Graph, py } from '../support/graphs.js';

/** Small limits so the engine's own check (not the Python runner's 1 MB output cap) is what trips. */
const limit = 64 * 1024;

let svc: TestService;
let echoWorkflow: string;
beforeAll(async () => {
  svc = await startTestService({ config: { cases: { maxInputBytes: limit, maxNodeOutputBytes: limit } } });
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, output);
  echoWorkflow = (await createWorkflow(svc, g, 'echo')).workflowId;
});
afterAll(async () => {
  await svc?.stop();
});

/** input(n) → python returning a string of n characters (and printing `printed` characters) → output. */
async function producer(): Promise<{ workflowId: string; code: string }> {
  const g = new Graph();
  const input = g.input([
    { name: 'n', type: 'int' },
    { name: 'printed', type: 'int' },
  ]);
  const code = g.python(
    'Produce',
    py('print("p" * inputs["printed"])\nreturn {"blob": "x" * inputs["n"]}'),
    [
      { name: 'n', type: 'int' },
      { name: 'printed', type: 'int' },
    ],
    [{ name: 'blob' }],
  );
  const output = g.output([{ name: 'blob' }]);
  g.edge(input, code);
  g.edge(code, output);
  return { workflowId: (await createWorkflow(svc, g, 'producer')).workflowId, code };
}

describe('payload limits', () => {
  it('defaults to 1 MiB for case inputs and node outputs, configurable by environment', () => {
    const defaults = loadConfig({});
    expect(defaults.cases).toMatchObject({ maxInputBytes: 1_048_576, maxNodeOutputBytes: 1_048_576 });
    const fromEnv = loadConfig({ CASEFLOW_CASE_MAX_INPUT_BYTES: '2048', CASEFLOW_CASE_MAX_NODE_OUTPUT_BYTES: '4096' });
    expect(fromEnv.cases).toMatchObject({ maxInputBytes: 2048, maxNodeOutputBytes: 4096 });
  });

  it('refuses case inputs over the limit with 413 and leaves the case PENDING', async () => {
    const caseId = await initiate(svc, { workflowId: echoWorkflow });
    const big = 'é'.repeat(limit / 2); // 2 bytes each in UTF-8: over the limit although fewer characters
    const r = await execute(svc, caseId, { inputs: { text: big } });
    expect(r.status, r.text).toBe(413);
    expect(r.body).toMatchObject({
      statusCode: 413,
      errorCode: 'PAYLOAD_TOO_LARGE',
      metadata: { field: 'body.inputs', limitBytes: limit },
    });
    expect(String(r.body.message)).toContain(`at most ${limit}`);
    expect((await caseStatus(svc, caseId)).status).toBe('PENDING');

    const viaJob = await refused(
      svc.client.POST('/job/execute', {
        body: { jobExecutionId: caseId, jobPayloadSchema: { text: { value: big } } },
      }),
      413,
    );
    expect(viaJob.metadata).toMatchObject({ field: 'body.jobPayloadSchema' });

    const initial = await refused(
      svc.client.POST('/api/v1/case', { body: { workflowId: echoWorkflow, initialInput: { text: big } } }),
      413,
    );
    expect(initial.metadata).toMatchObject({ field: 'body.initialInput' });

    const fits = await execute(svc, caseId, { inputs: { text: 'x'.repeat(limit - 100) } });
    expect(fits.status, fits.text).toBe(202);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
  });

  it('fails a node whose outputs exceed the limit (kind limit) and ends the case FAILED', async () => {
    const { workflowId, code } = await producer();
    const caseId = await startCase(svc, workflowId, { n: limit + 1, printed: 0 });
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('FAILED');
    expect(status.error).toMatchObject({ nodeId: code });
    const node = (await audit(svc, caseId)).audit.nodes_execution_data[code];
    expect(node?.status).toBe('failed');
    expect(node?.error?.kind).toBe('limit');
    expect(node?.error?.message).toContain(`over the limit of ${limit}`);
    expect(node?.outputs).toBeNull();

    const small = await startCase(svc, workflowId, { n: 1000, printed: 0 });
    expect((await waitForEnd(svc, small)).status).toBe('COMPLETED');
    expect(String((await results(svc, small)).blob?.value)).toHaveLength(1000);
  });

  it('cuts node logs to the same budget and says so', async () => {
    const { workflowId, code } = await producer();
    const caseId = await startCase(svc, workflowId, { n: 1, printed: limit * 3 });
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const logs = (await audit(svc, caseId)).audit.nodes_execution_data[code]?.logs ?? [];
    const bytes = Buffer.byteLength(JSON.stringify(logs));
    expect(bytes).toBeLessThan(limit + 1024);
    expect(logs.at(-1)?.message).toContain('Logs cut');
    expect(logs.some((l) => l.message.startsWith('stdout: ppp'))).toBe(true);
  });
});
