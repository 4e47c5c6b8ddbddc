import { randomUUID } from 'node:crypto';
import type { FirstAttemptResult } from '../../src/callbacks/delivery.js';
import { caseRunRevision } from '../../src/domain/case-run-changes.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { floatChain, py } from './graphs.js';

/** A case run of input(a) → Double (Python, b = a * 2) → output(b), started by this code, with its graph's ids. */
export function doubleCase(
  execution?: WorkflowNode['execution'],
  extra: Partial<CaseRunInput> = {},
): { chain: ReturnType<typeof floatChain>; input: CaseRunInput } {
  const chain = floatChain('Double', py('return {"b": inputs["a"] * 2}'), execution ? { execution } : {});
  const input: CaseRunInput = {
    caseId: randomUUID(),
    organizationId: randomUUID(),
    workspaceId: randomUUID(),
    graph: { nodes: chain.graph.nodes, edges: chain.graph.edges },
    inputs: { a: 2 },
    deadlineMs: 3_600_000,
    revision: caseRunRevision,
    ...extra,
  };
  return { chain, input };
}

/** A callback's first attempt that delivered (204), as the callback service answers it. */
export const deliveredFirstAttempt: FirstAttemptResult = {
  outcome: 'delivered',
  responseStatus: 204,
  error: null,
  schedule: {
    timeoutMs: 5000,
    initialIntervalMs: 1000,
    backoffCoefficient: 2,
    maximumIntervalMs: 60_000,
    maxElapsedMs: 3_600_000,
  },
};
