import { randomUUID } from 'node:crypto';
import { routeVariableName } from '../../src/domain/case-graph.js';
import { inlineKind } from '../../src/domain/node-kinds/kind.js';
import { nodeKinds } from '../../src/domain/node-kinds/registry.js';
import { Graph, vars } from './graphs.js';

/**
 * A throwaway node kind, added the way every kind is (one module, one
 * registration), so routing and the engine are tested without depending on
 * the built-in kinds. The prebuilt workflow bundle does not know it, so a case
 * runs it in the runNode activity.
 */
export const testBranchKind = inlineKind({
  handlerClass: 'test_branch',
  nodeType: 'branch',
  describe: 'Test only: each route is true when the `value` input is longer than the threshold.',
  process: (z) => z.object({ threshold: z.number() }).strict(),
  evaluate({ node, process, inputs }) {
    const big = (typeof inputs.value === 'string' ? inputs.value : '').length > process.threshold;
    const outputs: Record<string, unknown> = {};
    for (const routeId of Object.keys(node.routes ?? {})) outputs[routeVariableName(node, routeId)] = big;
    return {
      outputs,
      logs: [{ level: 'info', message: `threshold ${process.threshold}`, at: new Date().toISOString() }],
    };
  },
});

nodeKinds.register(testBranchKind);

/**
 * input (text) → branch (route "big": true → A, false → B) → both into output.
 * The branch node reads `text` from the input node; output reads A's result.
 */
export function routedGraph(): {
  g: Graph;
  input: string;
  branch: string;
  a: string;
  b: string;
  output: string;
  routeId: string;
  textId: string;
} {
  const g = new Graph();
  const textId = randomUUID();
  const routeId = randomUUID();
  const input = g.input([{ id: textId, name: 'text' }]);
  const branchIn = randomUUID();
  const branch = g.node({
    name: 'Branch',
    type: 'branch',
    handler_class: 'test_branch',
    process: { threshold: 3 },
    input_schema: vars([{ id: branchIn, name: 'value' }]),
    output_schema: vars([{ id: routeId, name: 'big', type: 'bool' }]),
    routes: { [routeId]: { id: routeId, name: 'big' } },
    properties: ['route'],
    variable_mappings: { [branchIn]: { from_node_id: input, from_variable_id: textId } },
  });
  const a = g.node({ name: 'A', type: 'branch', handler_class: 'test_branch', process: { threshold: 1 } });
  const b = g.node({ name: 'B', type: 'branch', handler_class: 'test_branch', process: { threshold: 2 } });
  const resultId = randomUUID();
  const output = g.node({
    name: 'Workflow Output',
    type: 'output',
    input_schema: vars([{ id: resultId, name: 'result' }]),
    fixed_values: { [resultId]: 'done' },
  });
  g.edge(input, branch);
  g.route(branch, a);
  g.route(branch, b, true);
  g.edge(a, output);
  g.edge(b, output);
  return { g, input, branch, a, b, output, routeId, textId };
}
