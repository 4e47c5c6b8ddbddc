import { z } from 'zod';
import { memberRoles } from '../human-tasks.js';

/**
 * What the agents exchange: the architect's plan, the triage verdict and a
 * builder's answer for one step. The same zod schemas validate the LLM's
 * structured output and produce the JSON schemas sent to it, so every field
 * is required (nullable where optional), as strict structured output wants.
 */
export const planVariableTypes = [
  'str',
  'int',
  'float',
  'bool',
  'date',
  'object',
  'array',
  'file',
  'array_files',
] as const;
export type PlanVariableType = (typeof planVariableTypes)[number];
const identifier = z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'a snake_case identifier');

export const planInputSchema = z.object({
  name: identifier,
  type: z.enum(planVariableTypes),
  description: z.string().max(500),
  /**
   * JSON text of a value used when the reviewer dry-runs the workflow; for a file input the text of a
   * sample file (a JSON array of texts for array_files), which the reviewer stores for the dry run.
   */
  sample: z.string().max(2000),
  /** For file / array_files inputs: the file types accepted (upper-case extensions, e.g. PDF, CSV); null: every type. */
  allowed_file_types: z
    .array(z.string().regex(/^[A-Z]{3,4}$/))
    .max(12)
    .nullable()
    .default(null),
});

export const planOutputSchema = z.object({ name: identifier, type: z.enum(planVariableTypes) });

/**
 * code: Python; condition: routing; llm_agent: language work on an LLM at run time; integration_action: a connected
 * integration's action; human_task: a person decides (its first bool output is the approve/reject route, the
 * outputs are the form); call_workflow: another active workflow of the workspace runs as a child case.
 */
export const planStepKinds = [
  'code',
  'condition',
  'llm_agent',
  'integration_action',
  'human_task',
  'call_workflow',
] as const;
export type PlanStepKind = (typeof planStepKinds)[number];

export const planStepSchema = z.object({
  id: z.string().regex(/^s[0-9]{1,3}$/, 's1, s2, …'),
  name: z.string().min(1).max(120),
  kind: z.enum(planStepKinds),
  description: z.string().max(1000),
  /** Variable names this step reads: workflow inputs or earlier steps' outputs. */
  inputs: z.array(identifier).max(50),
  /** Variables it produces (a condition produces none: it picks a branch). */
  outputs: z.array(planOutputSchema).max(50),
  /** Set on steps that run only on one branch of an earlier condition step. */
  branch_of: z.object({ condition: z.string(), when: z.boolean() }).nullable(),
  /**
   * For an integration_action step: the key of an integration the run offers by key (a discovered process's,
   * see IntegrationBinding), which fixes its action so no builder runs; null: a builder picks one of the tools.
   */
  integration: z.string().max(255).nullable(),
});

export const planSchema = z.object({
  name: z.string().min(1).max(255),
  description: z.string().max(2048),
  inputs: z.array(planInputSchema).max(50),
  steps: z.array(planStepSchema).min(1).max(30),
  outputs: z.array(planOutputSchema).min(1).max(50),
});

export type PlanInput = z.infer<typeof planInputSchema>;
export type PlanStep = z.infer<typeof planStepSchema>;
export type Plan = z.infer<typeof planSchema>;

export const triageSchema = z.object({ relevant: z.boolean(), reason: z.string().max(1000) });
export type TriageVerdict = z.infer<typeof triageSchema>;

export const conditionRuleOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'in', 'exists', 'empty'] as const;

/** A builder's answer: Python source for a code step, rules for a condition step, or why it could not. */
export const stepBuildSchema = z.object({
  source: z.string().max(262_144).nullable(),
  match: z.enum(['all', 'any']).nullable(),
  rules: z
    .array(
      z.object({
        variable: identifier,
        op: z.enum(conditionRuleOps),
        /** JSON text of the right operand; null for exists / empty. */
        value: z.string().max(2000).nullable(),
      }),
    )
    .max(50)
    .nullable(),
  /** An llm_agent step: its prompts (`{{ name }}` in the template reads the step input of that name). */
  llm: z
    .object({ system_prompt: z.string().min(1).max(32_768), user_template: z.string().min(1).max(65_536) })
    .nullable(),
  /** An integration_action step: the connection and action version, from the workspace's connected integrations. */
  action: z.object({ connection_id: z.string(), action_version_id: z.string() }).nullable(),
  /**
   * A human_task step: what the person sees (`{{ name }}` reads the step input of that name) and who decides (a
   * member role of the organization, or null: anyone with access to the workspace).
   */
  task: z
    .object({
      title: z.string().min(1).max(255),
      instructions: z.string().max(16_384),
      role: z.enum(memberRoles).nullable(),
    })
    .nullable()
    .default(null),
  /** A call_workflow step: the workspace workflow it runs (one of the offered workflows). */
  call: z.object({ workflow_id: z.string() }).nullable().default(null),
  /** Why the step could not be built, when it could not (the step then needs attention). */
  unresolved: z.string().max(1000).nullable(),
});
export type StepBuild = z.infer<typeof stepBuildSchema>;

/** One thing the reviewer found, tied to a step when it is one step's fault. */
export interface ReviewProblem {
  stepId: string | null;
  message: string;
  /** Found by running the workflow (the graph itself validated). */
  fromDryRun?: boolean;
  /** The step is built but the worker lacks what it needs to run (no LLM): no builder can fix that. */
  environment?: boolean;
}

/** A file the run was given, as the agents read it. */
export interface FileExcerpt {
  name: string;
  text: string;
}

/** Parses a sample / rule value written as JSON text; a bare word is taken as a string. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
