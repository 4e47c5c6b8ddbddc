import { z } from 'zod';
import { variableTypes } from '../domain/vocabulary.js';

/**
 * A workflow written as a file (YAML or JSON; docs/workflows-as-code.md). Nodes and variables are named and
 * referenced by name; the compiler turns names into the graph's ids. Parsing checks the shape only; references
 * are checked by compile.
 */

const name = z.string().min(1).max(255);
/** Node names: a dot separates the node from the variable in a reference. */
const nodeNames = <T extends z.ZodType>(value: T) =>
  z.record(name, value).superRefine((nodes, ctx) => {
    for (const key of Object.keys(nodes))
      if (key.includes('.')) ctx.addIssue({ code: 'custom', path: [key], message: 'a node name may not contain "."' });
  });
const typeName = z.enum(variableTypes);
const typeSpec = z.union([typeName, z.array(typeName).min(1).max(11)]);

/** A variable written out: its type(s) and options. `from` / `value` only where the variable is a node input. */
const variableObject = z
  .object({
    type: typeSpec.optional(),
    from: z.string().optional(),
    value: z.unknown().optional(),
    optional: z.boolean().optional(),
    nullable: z.boolean().optional(),
    default: z.unknown().optional(),
    description: z.string().max(2048).optional(),
    display_name: z.string().max(255).optional(),
  })
  .strict();

/** `"int"` (a type), `"node.variable"` (a mapping, type taken from the source) or the object form. */
const variableSpec = z.union([z.string().min(1), z.array(typeName).min(1).max(11), variableObject]);
export type VariableSpec = z.infer<typeof variableSpec>;
export type VariableObject = z.infer<typeof variableObject>;

const variableName = z.string().min(1).max(255);
const variables = z.record(variableName, variableSpec);

/** `fetch` (an edge), `{ check: large }` (when route large is true), `{ check: "not large" }` (when false). */
const afterEntry = z.union([name, z.record(name, z.string().min(1)).refine((m) => Object.keys(m).length === 1)]);
export type AfterEntry = z.infer<typeof afterEntry>;

/** One rule: `"amount > 100"`, or the graph's own `{ left, op, right }` object. */
const rule = z.union([z.string().min(1), z.record(z.string(), z.unknown())]);
export type RuleSpec = z.infer<typeof rule>;
const routeRules = z.union([
  rule,
  z.array(rule).min(1),
  z.object({ all: z.array(rule).min(1) }).strict(),
  z.object({ any: z.array(rule).min(1) }).strict(),
]);
export type RouteRules = z.infer<typeof routeRules>;

/**
 * A catalog code node. Declared (its name and source; its inputs and outputs are the node's): apply registers it
 * in the target organization, or cuts a new version of the one the workflow already runs when the declaration
 * changed. Or by ids (what export writes: the contract has no GET of a code node, so its source cannot be read
 * back); `source_sha256` is the fingerprint of the declaration the version was registered from.
 */
const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const codeRef = z.union([
  z
    .object({
      name,
      description: z.string().max(2048).optional(),
      source: z.string().min(1).optional(),
      source_file: z.string().min(1).optional(),
    })
    .strict(),
  z.object({ id: z.uuid(), version_id: z.uuid(), source_sha256: sha256.optional() }).strict(),
]);

/** A sub-workflow's callee by name in the target workspace; `version` pins one (default: its latest active version). */
const callRef = z.union([name, z.object({ workflow: name, version: z.number().int().min(1).optional() }).strict()]);

const nodeSpec = z
  .object({
    /** Keeps a node id that is not the one derived from the name (a graph authored elsewhere, then exported). */
    id: z.uuid().optional(),
    description: z.string().max(2048).optional(),
    // What the node runs: exactly one of these (checked by compile).
    python: z.string().min(1).optional(),
    python_file: z.string().min(1).optional(),
    code: codeRef.optional(),
    condition: z.record(name, routeRules).optional(),
    action: z
      .object({ connection: z.string().min(1), action: z.string().min(1) })
      .strict()
      .optional(),
    agent: z.record(z.string(), z.unknown()).optional(),
    call: callRef.optional(),
    /** Any other handler class, written the graph's way (kinds this format has no short key for). */
    kind: z.string().min(1).optional(),
    type: z.string().min(1).optional(),
    process: z.record(z.string(), z.unknown()).optional(),
    inputs: variables.optional(),
    outputs: variables.optional(),
    /** Output variables (bool) that route: edges can then follow them with `{ node: route }`. */
    routes: z.array(name).optional(),
    after: z.array(afterEntry).optional(),
    execution: z
      .object({ timeout_ms: z.number().int().optional(), max_attempts: z.number().int().optional() })
      .strict()
      .optional(),
  })
  .strict();
export type NodeSpec = z.infer<typeof nodeSpec>;

export const workflowFileSchema = z
  .object({
    name: z.string().min(1).max(255),
    description: z.string().max(2048).optional(),
    /** false: applied versions are saved inactive. */
    active: z.boolean().optional(),
    inputs: variables.optional(),
    nodes: nodeNames(nodeSpec).optional(),
    results: variables.optional(),
    results_after: z.array(afterEntry).optional(),
    /** Keep the input / output node ids of a graph authored elsewhere (like a node's `id`). */
    input_id: z.uuid().optional(),
    output_id: z.uuid().optional(),
  })
  .strict();
export type WorkflowFile = z.infer<typeof workflowFileSchema>;

/** Node names the format keeps for the workflow's input and output nodes. */
export const inputNodeName = 'input';
export const outputNodeName = 'output';
