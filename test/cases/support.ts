import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { JobAudit } from '../../src/api/schemas/cases.js';
import type { paths } from '../../src/client/index.js';
import type { WorkflowEdge, WorkflowNode } from '../../src/domain/graph.js';
import type { VariableSchema, VariableSchemaEntry } from '../../src/domain/variables.js';
import type { VariableType } from '../../src/domain/vocabulary.js';
import { answered, type TestResponse, type TestService } from '../support/harness.js';

export interface Var {
  id?: string;
  name: string;
  type?: VariableType;
  nullable?: boolean;
  optional?: boolean;
  tags?: VariableSchemaEntry['tags'];
}

export function vars(entries: Var[]): VariableSchema {
  const schema: Record<string, VariableSchemaEntry> = {};
  for (const e of entries) {
    const id = e.id ?? randomUUID();
    schema[id] = {
      id,
      variable_name: e.name,
      allowed_types: [{ type: e.type ?? 'str' }],
      ...(e.nullable ? { is_nullable: true } : {}),
      ...(e.optional ? { is_optional: true } : {}),
      ...(e.tags ? { tags: e.tags } : {}),
    };
  }
  return { schema, variable_addition_allowed: false };
}

/** A graph under construction, keyed by id as the API takes it. */
type InitiateBody = paths['/api/v1/case']['post']['requestBody']['content']['application/json'];

export class Graph {
  nodes: Record<string, WorkflowNode> = {};
  edges: Record<string, WorkflowEdge> = {};

  node(fields: Omit<WorkflowNode, 'id'>): string {
    const id = randomUUID();
    this.nodes[id] = { ...fields, id };
    return id;
  }

  input(inputs: Var[]): string {
    return this.node({ name: 'Workflow Input', type: 'input', output_schema: vars(inputs) });
  }

  output(results: Var[]): string {
    return this.node({ name: 'Workflow Output', type: 'output', input_schema: vars(results) });
  }

  python(name: string, source: string, inputs: Var[], outputs: Var[], extra: Partial<WorkflowNode> = {}): string {
    return this.node({
      name,
      type: 'code',
      handler_class: 'python_code',
      process: { source },
      input_schema: vars(inputs),
      output_schema: vars(outputs),
      ...extra,
    });
  }

  /** A condition node with one route `routeId` whose rules are `rules`. */
  condition(name: string, inputs: Var[], routeId: string, rules: Record<string, unknown>): string {
    return this.node({
      name,
      type: 'condition',
      handler_class: 'condition',
      input_schema: vars(inputs),
      output_schema: {
        schema: { [routeId]: { id: routeId, variable_name: 'matches', allowed_types: [{ type: 'bool' }] } },
        variable_addition_allowed: false,
      },
      routes: { [routeId]: { id: routeId, name: 'matches' } },
      properties: ['route'],
      process: { routes: { [routeId]: rules } },
    });
  }

  edge(from: string, to: string, extra: Partial<WorkflowEdge> = {}): string {
    const id = randomUUID();
    this.edges[id] = { id, from_node_id: from, to_node_id: to, ...extra };
    return id;
  }
}

/** input(a: float) → one Python node `name` (a: float → b: float) → output(b); the graph and its node ids. */
export function floatChain(
  name: string,
  source: string,
  extra: Partial<WorkflowNode> = {},
): { graph: Graph; input: string; code: string; output: string } {
  const graph = new Graph();
  const input = graph.input([{ name: 'a', type: 'float' }]);
  const code = graph.python(name, source, [{ name: 'a', type: 'float' }], [{ name: 'b', type: 'float' }], extra);
  const output = graph.output([{ name: 'b', type: 'float' }]);
  graph.edge(input, code);
  graph.edge(code, output);
  return { graph, input, code, output };
}

/** input(text) → one Python node `name` (text → text) → output(text). */
export function textChain(name: string, source: string): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const code = g.python(name, source, [{ name: 'text' }], [{ name: 'text' }]);
  const output = g.output([{ name: 'text' }]);
  g.edge(input, code);
  g.edge(code, output);
  return g;
}

export function py(body: string): string {
  return `def main(inputs):\n${body
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n')}\n`;
}

export async function createWorkflow(
  svc: TestService,
  g: Graph,
  name = 'case test',
): Promise<{ workflowId: string; entityId: string; workflowVersionId: string }> {
  return answered(
    svc.client.POST('/api/v1/workflow', {
      params: { header: { 'x-workspace-id': svc.workspaceId } },
      body: { name, activeStatus: 'active', nodes: g.nodes, edges: g.edges },
    }),
    201,
  );
}

export async function initiate(svc: TestService, body: InitiateBody): Promise<string> {
  return (await answered(svc.client.POST('/api/v1/case', { body }), 201)).caseId;
}

export async function execute(svc: TestService, caseId: string, body: Record<string, unknown>): Promise<TestResponse> {
  return svc.request('POST', `/api/v1/case/${caseId}/execute`, { body });
}

/** Initiates and executes; returns the case id once execute answered 202. */
export async function startCase(
  svc: TestService,
  workflowId: string,
  inputs: Record<string, unknown>,
  executeExtra: Record<string, unknown> = {},
): Promise<string> {
  const caseId = await initiate(svc, { workflowId });
  const r = await execute(svc, caseId, { inputs, ...executeExtra });
  expect(r.status, r.text).toBe(202);
  return caseId;
}

const terminal = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];

export async function waitForEnd(
  svc: TestService,
  caseId: string,
  timeoutMs = 45_000,
  base = '/api/v1/case',
): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const r = await svc.request('GET', `${base}/${caseId}/status`);
    expect(r.status, r.text).toBe(200);
    if (terminal.includes(r.body.status as string)) return r.body;
    if (Date.now() > until) throw new Error(`case ${caseId} still ${String(r.body.status)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function audit(svc: TestService, caseId: string, base = '/api/v1/case'): Promise<JobAudit> {
  const r = await svc.request('GET', `${base}/${caseId}/audit`);
  expect(r.status, r.text).toBe(200);
  return r.body as unknown as JobAudit;
}

export async function results(svc: TestService, caseId: string) {
  const body = await answered(svc.client.GET('/api/v1/case/{caseId}/results', { params: { path: { caseId } } }), 200);
  // 200 and 202 are both successes to the client; only the 200 body carries results.
  if (!('results' in body)) throw new Error(`case ${caseId} has not finished`);
  return body.results;
}

/** input(text) → python sleeping `seconds` → output(text) */
export function sleeper(seconds: number): Graph {
  const g = new Graph();
  const input = g.input([{ name: 'text' }]);
  const code = g.python(
    'Sleep',
    `import time\ndef main(inputs):\n    time.sleep(${seconds})\n    return {"text": inputs["text"]}\n`,
    [{ name: 'text' }],
    [{ name: 'text' }],
    {
      execution: { timeout_ms: 30_000 },
    },
  );
  const output = g.output([{ name: 'text' }]);
  g.edge(input, code);
  g.edge(code, output);
  return g;
}

/** The most spans (nodes, cases) whose [start, end] overlap at one moment (ISO times). */
export function peakOverlap(spans: Array<{ start: string; end: string }>): number {
  const events = spans.flatMap((s) => [
    { at: s.start, delta: 1 },
    { at: s.end, delta: -1 },
  ]);
  // An end and a start at the same instant do not overlap: the slot was handed over.
  events.sort((x, y) => x.at.localeCompare(y.at) || x.delta - y.delta);
  let open = 0;
  let peak = 0;
  for (const e of events) {
    open += e.delta;
    peak = Math.max(peak, open);
  }
  return peak;
}
