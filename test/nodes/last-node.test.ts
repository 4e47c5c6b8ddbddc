import { describe, expect, it } from 'vitest';
import { CaseScheduler } from '../../src/domain/case-scheduler.js';
import { endAfterLastNode } from '../../src/domain/last-node.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { Graph } from '../support/graphs.js';

const at = '2026-01-01T00:00:00.000Z';
const run = { caseId: 'case-1', organizationId: 'org-1', workspaceId: 'ws-1', inputs: {}, deadlineMs: 60_000 };

/** `in` → `a` → … by name (`out` an output node, `?` a condition, others code nodes), each chain of edges given. */
function graph(names: string[], ...chains: string[][]): Graph {
  const g = new Graph();
  for (const name of names) {
    if (name.endsWith('?'))
      g.condition(name.slice(0, -1), [], `${name}route`, { all: [{ left: { var: 'x' }, op: 'exists' }] });
    else g.bare(name, name === 'in' ? 'input' : name.startsWith('out') ? 'output' : 'code');
  }
  for (const chain of chains) g.chain(...chain);
  return g;
}

/** Starts the case and runs `done` to completion, then begins `last`: the scheduler as the workflow holds it then. */
function runningLast(g: Graph, done: string[], last: string): CaseScheduler {
  const s = new CaseScheduler({ caseId: run.caseId, graph: g, inputs: {} });
  s.start();
  for (const name of done) {
    const id = g.id(name);
    s.begin(id, at);
    s.inputsOf(id);
    s.complete(id, { outputs: { x: name }, logs: [] });
    s.settle(id, at);
  }
  s.begin(g.id(last), at);
  s.inputsOf(g.id(last));
  return s;
}

describe('the last node and the end in one step', () => {
  it('takes a node whose only successors are output nodes, with nothing else left to run', () => {
    const g = graph(['in', 'a', 'out'], ['in', 'a', 'out']);
    const tail = runningLast(g, ['in'], 'a').lastNodeTail(g.id('a'));
    expect(tail).toBeDefined();
    // The graph sent is the node and its output nodes (and their other parents), not the whole workflow.
    expect(Object.keys(tail?.graph.nodes ?? {}).sort()).toEqual([g.id('a'), g.id('out')].sort());
  });

  it('leaves any inline node other than an output to the workflow (the end runs nothing unbounded)', () => {
    const g = graph(['in', 'a', 'check?', 'out'], ['in', 'a', 'check', 'out']);
    expect(runningLast(g, ['in'], 'a').lastNodeTail(g.id('a'))).toBeUndefined();
  });

  it('leaves a node with another node still to run, or running, to the usual path', () => {
    const pending = graph(['in', 'a', 'b', 'out'], ['in', 'a', 'out'], ['in', 'b', 'out']);
    expect(runningLast(pending, ['in'], 'a').lastNodeTail(pending.id('a'))).toBeUndefined();
    const s = runningLast(pending, ['in'], 'a');
    s.begin(pending.id('b'), at);
    expect(s.lastNodeTail(pending.id('a'))).toBeUndefined();
    const joined = graph(['in', 'a', 'b', 'out'], ['in', 'a', 'out'], ['in', 'b', 'out']);
    expect(runningLast(joined, ['in', 'b'], 'a').lastNodeTail(joined.id('a'))).toBeDefined();
  });

  it("ends the case on a scheduler resumed from the tail as on the workflow's own", () => {
    const g = graph(['in', 'a', 'b', 'out', 'out2'], ['in', 'a', 'out'], ['in', 'b', 'out'], ['a', 'out2']);
    const live = runningLast(g, ['in', 'b'], 'a');
    const tail = live.lastNodeTail(g.id('a'));
    if (!tail) throw new Error('not the last node');
    const resumed = new CaseScheduler(
      { caseId: run.caseId, graph: tail.graph, inputs: {} },
      structuredClone(tail.snapshot),
    );
    const completion = { outputs: { x: 'A' }, logs: [], startedAt: at, finishedAt: '2026-01-01T00:00:01.000Z' };
    expect(endAfterLastNode(resumed, run, g.id('a'), completion, at)).toBe('COMPLETED');
    expect(endAfterLastNode(live, run, g.id('a'), completion, at)).toBe('COMPLETED');
    expect(resumed.progress()).toEqual(live.progress());
    expect(live.progress().nodes[g.id('out2')]).toMatchObject({ status: 'completed', attempts: 1, inputs: {} });
    expect(live.progress().executed).toEqual(['in', 'b', 'a', 'out', 'out2'].map((name) => g.id(name)));
  });

  it('resolves an output that maps a variable from a node before the last one as the workflow does', () => {
    // input(a) → Double → output(b, echo), echo mapped from the input node: not a parent of the output node.
    const g = new Graph();
    const input = g.input([{ id: 'a-var', name: 'a', type: 'float' }]);
    const double = g.python('Double', 'unused', [{ name: 'a', type: 'float' }], [{ name: 'b', type: 'float' }]);
    const output = g.output([
      { name: 'b', type: 'float' },
      { id: 'echo-var', name: 'echo', type: 'float' },
    ]);
    g.nodes[output] = {
      ...(g.nodes[output] as WorkflowNode),
      variable_mappings: { 'echo-var': { from_node_id: input, from_variable_id: 'a-var' } },
    };
    g.chain(input, double, output);
    const live = new CaseScheduler({ caseId: run.caseId, graph: g, inputs: { a: 2 } });
    live.start();
    live.begin(input, at);
    live.inputsOf(input);
    live.complete(input, { outputs: { a: 2 }, logs: [] });
    live.settle(input, at);
    live.begin(double, at);
    live.inputsOf(double);
    const tail = live.lastNodeTail(double);
    if (!tail) throw new Error('not the last node');
    const resumed = new CaseScheduler(
      { caseId: run.caseId, graph: tail.graph, inputs: { a: 2 } },
      structuredClone(tail.snapshot),
    );
    const completion = { outputs: { b: 4 }, logs: [], startedAt: at, finishedAt: '2026-01-01T00:00:01.000Z' };
    expect(endAfterLastNode(resumed, run, double, completion, at)).toBe('COMPLETED');
    expect(endAfterLastNode(live, run, double, completion, at)).toBe('COMPLETED');
    expect(live.progress().nodes[output]).toMatchObject({ inputs: { b: 4, echo: 2 } });
    expect(resumed.progress()).toEqual(live.progress());
  });
});
