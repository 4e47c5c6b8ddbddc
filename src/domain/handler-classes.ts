import { z, type ZodType } from 'zod';
import type { WorkflowNode } from './graph.js';
import { conditionHandlerClass } from './condition-schema.js';
import { pythonCodeHandlerClass } from './python-code-schema.js';

/**
 * What a `handler_class` is: the node type it belongs to, the schema of the
 * node's `process` (checked when a workflow is saved) and a one-line
 * description for documentation and the generation agents.
 */
export interface HandlerClass {
  nodeType: string;
  process: ZodType;
  describe: string;
}

/** The input node carries the workflow's input schema in its `output_schema`; it has nothing to configure. */
const inputHandler: HandlerClass = {
  nodeType: 'input',
  process: z.object({}).strict(),
  describe: "The workflow's entry: its output_schema is the workflow's input schema (jobPayloadSchema).",
};

/** The output node's `input_schema` is the results schema; its inputs are mapped from upstream nodes. */
const outputHandler: HandlerClass = {
  nodeType: 'output',
  process: z.object({}).strict(),
  describe: "The workflow's exit: its input_schema is the case results schema.",
};

/**
 * Every handler class, by name. Add yours with one entry (define it in your
 * own module and import it here); the graph validation and the docs read
 * this record, the case engine dispatches on the same names.
 */
export const handlerClasses: Record<string, HandlerClass> = {
  input: inputHandler,
  output: outputHandler,
  condition: conditionHandlerClass,
  python_code: pythonCodeHandlerClass,
};

/**
 * The handler class a node runs with: its `handler_class`, or when that is
 * absent the class named like the node's type (so `input` / `output` nodes
 * need not spell it out).
 */
export function handlerClassName(node: Pick<WorkflowNode, 'type' | 'handler_class'>): string {
  return node.handler_class ?? node.type;
}

/** The registered class of a node; undefined when its name is not registered. */
export function handlerClassOf(node: Pick<WorkflowNode, 'type' | 'handler_class'>): HandlerClass | undefined {
  const name = handlerClassName(node);
  return Object.hasOwn(handlerClasses, name) ? handlerClasses[name] : undefined;
}
