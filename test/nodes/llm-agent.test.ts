import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmNotConfiguredMessage } from '../../src/domain/node-kinds/llm-agent.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { createLogger } from '../../src/logging/logger.js';
import { audit, createWorkflow, results, startCase, waitForEnd } from '../cases/support.js';
import { Graph, vars, type Var } from '../support/graphs.js';
import { historyText } from '../connections/support.js';
import { FakeLlm, type ChatRequest, type Reply } from '../generation/fake-llm.js';
import { refused, startTestService, type TestService } from '../support/harness.js';

const llmKey = 'sk-node-secret-llm-key-5566778899';
const answer = { category: 'billing', confidence: 0.92, tags: ['invoice', 'late'] };
const outputs: Var[] = [{ name: 'category' }, { name: 'confidence', type: 'float' }, { name: 'tags', type: 'array' }];

/** input(ticket, customer) → llm_agent (classifies the ticket) → output(category, confidence, tags). */
function classifier(marker: string, extra: Partial<WorkflowNode> = {}, process: Record<string, unknown> = {}): Graph {
  const inputs: Var[] = [{ name: 'ticket' }, { name: 'customer', type: 'object' }];
  const g = new Graph();
  const input = g.input(inputs);
  const node = g.node({
    name: 'Classify ticket',
    type: 'agent',
    handler_class: 'llm_agent',
    process: {
      system_prompt: 'You classify support tickets.',
      user_template: `[${marker}] Ticket: {{ ticket }}\nCustomer: {{customer}}`,
      model: 'node-model-1',
      temperature: 0,
      output_descriptions: { category: 'billing, bug or question' },
      ...process,
    },
    input_schema: vars(inputs),
    output_schema: vars(outputs),
    ...extra,
  });
  const output = g.output(outputs);
  g.edge(input, node);
  g.edge(node, output);
  return g;
}

const caseInputs = { ticket: 'My invoice is late', customer: { id: 7, plan: 'pro' } };

type NodeData = Awaited<ReturnType<typeof audit>>['audit']['nodes_execution_data'][string];
async function llmNode(svc: TestService, caseId: string): Promise<NodeData> {
  const data = Object.values((await audit(svc, caseId)).audit.nodes_execution_data);
  const node = data.find((n) => n.handler_class === 'llm_agent');
  if (!node) throw new Error('no llm_agent node in the audit');
  return node;
}

describe('llm_agent nodes', () => {
  const llm = new FakeLlm();
  const logLines: string[] = [];
  /** Replies by the marker in the user message, one per call in order (the last repeats). */
  const replies = new Map<string, Reply[]>();
  const callsOf = (marker: string): ChatRequest[] =>
    llm.calls.filter((c) => c.request.messages[1]?.content.includes(`[${marker}]`)).map((c) => c.request);
  let svc: TestService;

  beforeAll(async () => {
    await llm.start();
    llm.script = (_agent, request) => {
      const marker = /^\[([a-z0-9-]+)\]/.exec(request.messages[1]?.content ?? '')?.[1] ?? '';
      const script = replies.get(marker) ?? [{ raw: { status: 500, body: 'no script' } }];
      return script[Math.min(callsOf(marker).length - 1, script.length - 1)] ?? { raw: { status: 500, body: '' } };
    };
    svc = await startTestService({
      config: { llm: { baseUrl: llm.url, apiKey: llmKey, model: 'worker-default-model', timeoutMs: 5000 } },
      logger: createLogger('debug', {}, 'json', { write: (line: string) => void logLines.push(line) }),
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await llm.stop();
  });

  it('sends the prompts and the output schema, maps the structured answer to the outputs and records the tokens', async () => {
    replies.set('good', [{ json: answer, usage: { prompt_tokens: 120, completion_tokens: 30 } }]);
    const wf = await createWorkflow(svc, classifier('good'), 'classify');
    const caseId = await startCase(svc, wf.workflowId, caseInputs);
    const status = await waitForEnd(svc, caseId);
    expect(status.status, JSON.stringify(status)).toBe('COMPLETED');
    const out = await results(svc, caseId);
    expect(out.category?.value).toBe('billing');
    expect(out.confidence?.value).toBe(0.92);
    expect(out.tags?.value).toEqual(['invoice', 'late']);

    const [request] = callsOf('good');
    expect(request?.model).toBe('node-model-1');
    expect(request?.temperature).toBe(0);
    expect(request?.messages[0]).toEqual({ role: 'system', content: 'You classify support tickets.' });
    expect(request?.messages[1]?.content).toBe('[good] Ticket: My invoice is late\nCustomer: {"id":7,"plan":"pro"}');
    expect(request?.response_format?.json_schema?.name).toBe('node_output');
    expect(request?.response_format?.json_schema?.schema).toMatchObject({
      type: 'object',
      required: ['category', 'confidence', 'tags'],
      additionalProperties: false,
      properties: {
        category: { type: 'string', description: 'billing, bug or question' },
        confidence: { type: 'number' },
        tags: { type: 'array' },
      },
    });
    expect(llm.calls.find((c) => c.request === request)?.authorization).toBe(`Bearer ${llmKey}`);

    const node = await llmNode(svc, caseId);
    expect(node).toMatchObject({ status: 'completed', attempts: 1 });
    expect(node.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 });
    expect(node.logs.map((l) => l.message).join('\n')).toContain('node-model-1 answered: 150 tokens');

    // The key is in no answer, no Temporal history, no log line and not in the database files.
    const history = await historyText(svc, `case-${caseId}`);
    expect(history).toContain('llm_agent');
    expect(history).toContain('billing');
    const texts = [JSON.stringify(await audit(svc, caseId)), JSON.stringify(status), history, logLines.join('\n')];
    for (const text of texts) expect(text).not.toContain(llmKey);
    for (const file of readdirSync(svc.dataDir).filter((f) => f.startsWith('caseflow.db')))
      expect(readFileSync(path.join(svc.dataDir, file)).includes(llmKey), file).toBe(false);
  });

  it('uses the worker default model when the node names none', async () => {
    replies.set('default-model', [{ json: answer }]);
    const wf = await createWorkflow(svc, classifier('default-model', {}, { model: undefined }), 'default model');
    const caseId = await startCase(svc, wf.workflowId, caseInputs);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    expect(callsOf('default-model')[0]?.model).toBe('worker-default-model');
  });

  it('fails the node on malformed JSON after its attempts, counting the tokens of every attempt', async () => {
    replies.set('malformed', [{ content: 'Sure! Here is the category: billing' }]);
    const wf = await createWorkflow(
      svc,
      classifier('malformed', { execution: { timeout_ms: 15_000, max_attempts: 2 } }),
      'malformed',
    );
    const caseId = await startCase(svc, wf.workflowId, caseInputs);
    expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
    const node = await llmNode(svc, caseId);
    expect(node.status).toBe('failed');
    expect(node.attempts).toBe(2);
    expect(node.error).toMatchObject({ kind: 'llm_malformed' });
    expect(node.error?.message).toContain('not JSON');
    expect(node.usage).toEqual({ prompt_tokens: 200, completion_tokens: 100, total_tokens: 300 });
    expect(callsOf('malformed')).toHaveLength(2);
  });

  it('reads at most the answer cap from the LLM endpoint: an oversized answer or error body fails the node, read no further', async () => {
    // 9 MB answers, over the 4 MB cap: a hostile or broken endpoint cannot fill the worker's heap.
    replies.set('oversized', [{ content: 'x'.repeat(9 * 1024 * 1024) }]);
    replies.set('oversized-error', [{ raw: { status: 500, body: 'y'.repeat(9 * 1024 * 1024) } }]);
    for (const marker of ['oversized', 'oversized-error']) {
      const wf = await createWorkflow(svc, classifier(marker, { execution: { max_attempts: 1 } }), marker);
      const caseId = await startCase(svc, wf.workflowId, caseInputs);
      expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
      const node = await llmNode(svc, caseId);
      expect(node.error).toMatchObject({ kind: 'llm_malformed' });
      expect(node.error?.message).toContain('larger than 4194304 bytes');
    }
  });

  it('retries a 429 after its Retry-After and completes on the next attempt', async () => {
    replies.set('rate-limited', [
      { raw: { status: 429, body: '{"error":"slow down"}', headers: { 'retry-after': '1' } } },
      { json: answer },
    ]);
    const wf = await createWorkflow(svc, classifier('rate-limited'), 'rate limited');
    const caseId = await startCase(svc, wf.workflowId, caseInputs);
    expect((await waitForEnd(svc, caseId)).status).toBe('COMPLETED');
    const node = await llmNode(svc, caseId);
    expect(node).toMatchObject({ status: 'completed', attempts: 2 });
    expect(node.usage?.total_tokens).toBe(150);
    expect(callsOf('rate-limited')).toHaveLength(2);
    expect((await results(svc, caseId)).category?.value).toBe('billing');
  });

  it('does not retry a 4xx the LLM rejects, nor a refusal', async () => {
    replies.set('rejected', [{ raw: { status: 404, body: '{"error":"model node-model-1 not found"}' } }]);
    replies.set('refused', [{ refusal: 'I cannot help with that' }]);
    for (const [marker, kind] of [
      ['rejected', 'llm_rejected'],
      ['refused', 'llm_refused'],
    ] as const) {
      const wf = await createWorkflow(svc, classifier(marker, { execution: { max_attempts: 3 } }), marker);
      const caseId = await startCase(svc, wf.workflowId, caseInputs);
      expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
      const node = await llmNode(svc, caseId);
      expect(node).toMatchObject({ status: 'failed', attempts: 1, error: { kind } });
      expect(callsOf(marker)).toHaveLength(1);
    }
  });

  it('fails with a configuration error, calling no LLM, for a template naming a non-input or an output an LLM cannot give', async () => {
    const before = llm.calls.length;
    const unknown = classifier('unknown-var', {}, { user_template: '[unknown-var] {{ secret_of_other_node }}' });
    const fileOut = classifier('file-out', {
      output_schema: vars([{ name: 'category' }, { name: 'report', type: 'file' }]),
    });
    for (const [graph, message] of [
      [unknown, 'user_template names {{secret_of_other_node}}, which is not an input of the node'],
      [fileOut, 'llm_agent output report has type file'],
    ] as const) {
      const wf = await createWorkflow(svc, graph, 'misconfigured');
      const caseId = await startCase(svc, wf.workflowId, caseInputs);
      expect((await waitForEnd(svc, caseId)).status).toBe('FAILED');
      const node = await llmNode(svc, caseId);
      expect(node).toMatchObject({ attempts: 1, error: { kind: 'configuration' } });
      expect(node.error?.message).toContain(message);
    }
    expect(llm.calls.length).toBe(before);
  });

  it('refuses at save a process that does not match the kind (400, nothing saved)', async () => {
    for (const process of [{ temperature: 3 }, { system_prompt: '' }, { base_url: 'http://169.254.169.254/v1' }]) {
      const g = classifier('never', {}, process);
      const res = await refused(
        svc.client.POST('/api/v1/workflow', {
          params: { header: { 'x-workspace-id': svc.workspaceId } },
          body: { name: 'bad llm node', nodes: g.nodes, edges: g.edges },
        }),
        400,
      );
      expect(JSON.stringify(res)).toContain('.process');
    }
  });
});

describe('llm_agent nodes without an LLM configured', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('fails the node at once with a clear configuration error', async () => {
    const wf = await createWorkflow(svc, classifier('none', { execution: { max_attempts: 3 } }), 'no llm');
    const caseId = await startCase(svc, wf.workflowId, caseInputs);
    const status = await waitForEnd(svc, caseId);
    expect(status.status).toBe('FAILED');
    const node = await llmNode(svc, caseId);
    expect(node).toMatchObject({ status: 'failed', attempts: 1, usage: null });
    expect(node.error).toEqual({ kind: 'configuration', message: llmNotConfiguredMessage });
  });
});
