import type { CaseResults } from '../cases.js';
import type { WorkflowNode } from '../graph.js';
import { inlineKind } from './kind.js';

/**
 * The workflow's exit: collects its resolved inputs, which become the case
 * results, one entry per variable of its input_schema keyed by variable_name
 * (null when no value arrived).
 */
export const outputKind = inlineKind({
  handlerClass: 'output',
  nodeType: 'output',
  describe: "The workflow's exit: its input_schema is the case results schema.",
  process: (z) => z.object({}).strict(),
  evaluate: ({ inputs }) => ({ outputs: { ...inputs }, logs: [] }),
  results: outputResults,
});

function outputResults(node: WorkflowNode, outputs: Record<string, unknown>): CaseResults {
  const results: CaseResults = {};
  const declared = node.input_schema?.schema;
  if (!declared || Object.keys(declared).length === 0) {
    for (const [name, value] of Object.entries(outputs))
      results[name] = { value, type: typeOfValue(value), displayName: name };
    return results;
  }
  for (const entry of Object.values(declared)) {
    const value = Object.hasOwn(outputs, entry.variable_name) ? outputs[entry.variable_name] : null;
    results[entry.variable_name] = {
      value,
      type: entry.allowed_types[0]?.type ?? typeOfValue(value),
      displayName: entry.display_name ?? entry.variable_name,
    };
  }
  return results;
}

function typeOfValue(value: unknown): string {
  if (typeof value === 'string') return 'str';
  if (typeof value === 'number') return 'float';
  if (typeof value === 'boolean') return 'bool';
  if (Array.isArray(value)) return 'array';
  return 'object';
}
