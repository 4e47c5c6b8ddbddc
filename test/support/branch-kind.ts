import { routeVariableName } from '../../src/domain/case-graph.js';
import { inlineKind } from '../../src/domain/node-kinds/kind.js';
import { nodeKinds } from '../../src/domain/node-kinds/registry.js';

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
