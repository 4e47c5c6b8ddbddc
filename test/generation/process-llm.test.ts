import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { FakeLlm, planStep as step, stepOf, unused, type Reply } from './fake-llm.js';
import {
  connectErp,
  importInvoiceProcess,
  nodesOf,
  generate,
  integrationNodes,
  type ConnectedErp,
} from './process-support.js';

/** What an architect makes of the invoice process: its steps, the decision, the ERP steps on the connection. */
const invoicePlan = (integration: string) => ({
  name: 'Invoice approval',
  description: 'From the discovered invoice process',
  inputs: [
    { name: 'scanned_invoice', type: 'str', description: 'The scan', sample: '"ACME invoice 1200 EUR"' },
    { name: 'approved', type: 'bool', description: 'The approver said yes', sample: 'true' },
  ],
  steps: [
    step('s1', 'Register invoice', {
      inputs: ['scanned_invoice'],
      outputs: [{ name: 'text', type: 'str' }],
    }),
    step('s2', 'Match purchase order', {
      kind: 'integration_action',
      integration,
      inputs: ['text'],
      outputs: [{ name: 'record_id', type: 'str' }],
    }),
    step('s3', 'Approved?', { kind: 'condition', inputs: ['approved'] }),
    step('s4', 'Pay supplier', {
      kind: 'integration_action',
      integration,
      inputs: ['text'],
      outputs: [{ name: 'record_id', type: 'str' }],
      branch_of: { condition: 's3', when: true },
    }),
    step('s5', 'Notify supplier of rejection', {
      inputs: ['text'],
      outputs: [{ name: 'notice', type: 'str' }],
      branch_of: { condition: 's3', when: false },
    }),
  ],
  outputs: [{ name: 'record_id', type: 'str' }],
});

const builds: Record<string, unknown> = {
  s1: {
    source: 'def main(inputs):\n    return {"text": " ".join(str(inputs.get("scanned_invoice") or "").split())}\n',
    match: null,
    rules: null,
    ...unused,
    unresolved: null,
  },
  s3: {
    source: null,
    match: 'all',
    rules: [{ variable: 'approved', op: 'eq', value: 'true' }],
    ...unused,
    unresolved: null,
  },
  s5: {
    source: 'def main(inputs):\n    return {"notice": "rejected: " + inputs["text"]}\n',
    match: null,
    rules: null,
    ...unused,
    unresolved: null,
  },
};

describe('generation from a discovered process with an OpenAI-compatible LLM', () => {
  let svc: TestService;
  let erp: ConnectedErp;
  const llm = new FakeLlm();

  beforeAll(async () => {
    await llm.start();
    svc = await startTestService({ config: { llm: { baseUrl: llm.url, apiKey: 'sk-process-llm', timeoutMs: 3000 } } });
    erp = await connectErp(svc);
  });
  afterAll(async () => {
    await erp?.server.close();
    await svc?.stop();
    await llm.stop();
  });

  it('gives the architect the BPMN-imported process and the connection; the result validates and dry-runs (completed)', async () => {
    const processId = await importInvoiceProcess(svc);
    llm.calls = [];
    llm.script = (agent, request): Reply => {
      if (agent === 'plan') return { json: invoicePlan('erp system') };
      if (agent === 'step_build') return { json: builds[stepOf(request)] };
      return { raw: { status: 500, body: 'triage is not asked for a process' } };
    };
    const { workflowId, run } = await generate(svc, { processId });
    expect(run, JSON.stringify(run.tasks_by_agent)).toMatchObject({
      status: 'completed',
      planner: 'llm',
      needs_attention: [],
      source_process: { processId, processVersionId: null, name: 'Invoice approval' },
    });

    expect(llm.count('triage')).toBe(0);
    const plan = llm.calls.find((c) => c.agent === 'plan')?.request.messages ?? [];
    expect(plan[0]?.content).toContain('built from a discovered business process');
    expect(plan[1]?.content).toContain('"name":"Invoice approval"');
    expect(plan[1]?.content).toContain('"branchLabel":"Yes"');
    expect(plan[1]?.content).toContain('"key":"erp system"');
    // Only the code and condition steps went to builders; the integration steps run the connection's action.
    expect(
      llm.calls
        .filter((c) => c.agent === 'step_build')
        .map((c) => stepOf(c.request))
        .sort(),
    ).toEqual(['s1', 's3', 's5']);
    const nodes = await nodesOf(svc, workflowId);
    expect(integrationNodes(nodes)).toEqual([
      ['Match purchase order', erp.connectionId],
      ['Pay supplier', erp.connectionId],
    ]);
    expect(erp.server.received).toHaveLength(0);
  });

  it('sends a plan naming an integration that is not connected back to the architect', async () => {
    const processId = await importInvoiceProcess(svc);
    llm.calls = [];
    llm.script = (agent, request, n): Reply => {
      if (agent === 'plan') return { json: invoicePlan(n === 1 ? 'salesforce' : 'erp system') };
      return { json: builds[stepOf(request)] };
    };
    const { run } = await generate(svc, { processId, prompt: 'Keep it short' });
    expect(run.status, JSON.stringify(run.tasks_by_agent)).toBe('completed');
    const plans = llm.calls.filter((c) => c.agent === 'plan').map((c) => c.request.messages[1]?.content ?? '');
    expect(plans).toHaveLength(2);
    expect(plans[0]).toContain('Keep it short');
    expect(plans[1]).toContain(
      'names integration "salesforce", which is not one of the connected integrations offered',
    );
  });
});
