import type { WorkflowNode } from './graph.js';

/**
 * Words every layer uses the same way: the value types a variable, a catalog
 * field or a Python value may have, and how a node names its kind. Pure: the
 * workflow bundle imports it.
 */

/**
 * Types of catalog fields and Python values; workflow variables take the same
 * ones, so code-node and action fields map onto node variables without loss.
 */
export const valueTypes = [
  'str',
  'int',
  'float',
  'bool',
  'date',
  'file',
  'array',
  'object',
  'json_string',
  'binary',
  'node',
] as const;
export type ValueType = (typeof valueTypes)[number];

/** A workflow variable may also be `array_files` (an array of file URLs), which travels as an `array`. */
export const variableTypes = [...valueTypes, 'array_files'] as const;
export type VariableType = (typeof variableTypes)[number];

const valueTypeSet: ReadonlySet<string> = new Set(valueTypes);

export function isValueType(type: string): type is ValueType {
  return valueTypeSet.has(type);
}

/**
 * The `handler_class` a node runs with: its own, or when absent the class
 * named like its type (so `input` / `output` nodes need not spell it out).
 */
export function handlerClassName(node: Pick<WorkflowNode, 'type' | 'handler_class'>): string {
  return node.handler_class ?? node.type;
}
