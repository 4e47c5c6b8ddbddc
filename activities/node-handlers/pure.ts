import { evaluateCondition } from '../../src/domain/condition-rules.js';
import type { ConditionProcess } from '../../src/domain/condition-schema.js';
import { routeVariableName } from '../../src/domain/case-graph.js';
import type { CaseResults } from '../../src/domain/cases.js';
import type { WorkflowNode } from '../../src/domain/graph.js';
import { NodeFailure, type NodeHandler, type NodeRunResult } from './types.js';

/**
 * Handlers without I/O: the case-run workflow imports this module and runs
 * them inline (no activity, no history event). Keep them deterministic.
 */

/** Passes the case inputs on; with a declared output_schema only its variables. */
export const inputNodeHandler: NodeHandler = {
  handlerClass: 'input',
  run({ node, caseInputs }): NodeRunResult {
    const declared = node.output_schema?.schema;
    if (!declared || Object.keys(declared).length === 0) return { outputs: { ...caseInputs }, logs: [] };
    const outputs: Record<string, unknown> = {};
    for (const entry of Object.values(declared)) {
      if (Object.hasOwn(caseInputs, entry.variable_name)) outputs[entry.variable_name] = caseInputs[entry.variable_name];
    }
    return { outputs, logs: [] };
  },
};

/** Collects its resolved inputs: they become the case results (see outputResults). */
export const outputNodeHandler: NodeHandler = {
  handlerClass: 'output',
  run({ inputs }): NodeRunResult {
    return { outputs: { ...inputs }, logs: [] };
  },
};

/** Routing without code: sets each route's bool output from structured rules. */
export const conditionNodeHandler: NodeHandler = {
  handlerClass: 'condition',
  run({ node, inputs }): NodeRunResult {
    const process = node.process as ConditionProcess | undefined;
    // The process was validated against conditionProcessSchema when the workflow was saved.
    if (!process || typeof process.routes !== 'object' || process.routes === null) {
      throw new NodeFailure('condition node has no routes in its process', 'configuration', [], undefined, false);
    }
    const outcome = evaluateCondition(process, inputs);
    const outputs: Record<string, unknown> = {};
    for (const [routeId, value] of Object.entries(outcome)) outputs[routeVariableName(node, routeId)] = value;
    return { outputs, logs: [] };
  },
};

export const pureNodeHandlers: Readonly<Record<string, NodeHandler>> = {
  input: inputNodeHandler,
  output: outputNodeHandler,
  condition: conditionNodeHandler,
};

/**
 * An output node's contribution to the case results: one entry per variable
 * of its input_schema, keyed by variable_name (null when no value arrived).
 */
export function outputResults(node: WorkflowNode, outputs: Record<string, unknown>): CaseResults {
  const results: CaseResults = {};
  const declared = node.input_schema?.schema;
  if (!declared || Object.keys(declared).length === 0) {
    for (const [name, value] of Object.entries(outputs)) results[name] = { value, type: typeOfValue(value), displayName: name };
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
