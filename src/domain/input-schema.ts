import { z } from 'zod';
import type { WorkflowGraph, WorkflowNode } from './graph.js';
import { variableTagSchema, type VariableSchema } from './variables.js';

/** One entry of `jobPayloadSchema` (and of the results schema), as the contract lists its fields. */
export const payloadSchemaEntrySchema = z.object({
  id: z.string(),
  variable_name: z.string(),
  display_name: z.string(),
  type: z.string().meta({
    description: 'str, float, bool, date, file, array, array_files or object (plus int, json_string, binary, node)',
  }),
  is_nullable: z.boolean(),
  tags: z.array(variableTagSchema),
});

export const payloadSchemaSchema = z
  .record(z.string(), payloadSchemaEntrySchema)
  .meta({ description: 'Keyed by variable_name' });
export type PayloadSchema = z.infer<typeof payloadSchemaSchema>;

function nodeOfType(graph: WorkflowGraph, type: string): WorkflowNode | undefined {
  return Object.values(graph.nodes).find((node) => node.type === type);
}

/**
 * A variable schema keyed by variable name. A variable allowing several
 * types reports its first one: the contract's entry has a single `type`.
 */
function byVariableName(schema: VariableSchema | undefined): PayloadSchema {
  const result: PayloadSchema = {};
  for (const entry of Object.values(schema?.schema ?? {})) {
    result[entry.variable_name] = {
      id: entry.id,
      variable_name: entry.variable_name,
      display_name: entry.display_name ?? entry.variable_name,
      type: entry.allowed_types[0]?.type ?? 'str',
      is_nullable: entry.is_nullable ?? false,
      tags: entry.tags ?? [],
    };
  }
  return result;
}

/** The workflow's input schema: the input node's `output_schema`, keyed by variable name. */
export function jobPayloadSchema(graph: WorkflowGraph): PayloadSchema {
  return byVariableName(nodeOfType(graph, 'input')?.output_schema);
}

/** The workflow's results schema: the output node's `input_schema`, keyed by variable name. */
export function resultsSchema(graph: WorkflowGraph): PayloadSchema {
  return byVariableName(nodeOfType(graph, 'output')?.input_schema);
}
