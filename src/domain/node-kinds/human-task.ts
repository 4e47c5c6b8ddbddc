import type { z } from 'zod';
import type { WorkflowNode } from '../graph.js';
import { memberRoles, renderInstructions, templateNames, type TaskAssignee } from '../human-tasks.js';
import { NodeFailure, waitingKind, type ChangeInForce, type NodeProblem, type Zod } from './kind.js';

/** The shortest due time a task may be given: a person needs at least a minute. */
const minDueMs = 60_000;
/** The longest (the case's maximum wait, cases.maxWaitMs, bounds it at run time too). */
const maxDueMs = 365 * 24 * 3600 * 1000;

function assigneeSchema(zod: Zod) {
  return zod.discriminatedUnion('type', [
    zod.object({ type: zod.literal('user'), user_id: zod.uuid() }).strict(),
    zod.object({ type: zod.literal('role'), role: zod.enum(memberRoles) }).strict(),
    zod.object({ type: zod.literal('workspace') }).strict(),
  ]);
}

function processSchema(zod: Zod) {
  const assignee = assigneeSchema(zod);
  return zod
    .object({
      /** Shown in the inbox; `{{ name }}` as in the instructions. */
      title: zod.string().min(1).max(255),
      /** Shown to the person; `{{ name }}` is replaced by the node input of that variable_name. */
      instructions: zod.string().max(16_384).optional(),
      assignee,
      /** A duration from when the task opens, or a date input of the node (plus an offset). */
      due: zod
        .union([
          zod.object({ after_ms: zod.number().int().min(minDueMs).max(maxDueMs) }).strict(),
          zod
            .object({
              input: zod.string().min(1).max(255),
              offset_ms: zod.number().int().min(-maxDueMs).max(maxDueMs).optional(),
            })
            .strict(),
        ])
        .optional(),
      /** When the task is due (default: fail the node). */
      on_due: zod
        .discriminatedUnion('action', [
          zod.object({ action: zod.literal('fail') }).strict(),
          zod.object({ action: zod.literal('route'), route_id: zod.string().min(1) }).strict(),
          zod
            .object({
              action: zod.literal('escalate'),
              assignee,
              due_after_ms: zod.number().int().min(minDueMs).max(maxDueMs).optional(),
            })
            .strict(),
        ])
        .optional(),
    })
    .strict();
}

type HumanTaskProcess = z.output<ReturnType<typeof processSchema>>;

function inputNames(node: WorkflowNode): Set<string> {
  return new Set(Object.values(node.input_schema?.schema ?? {}).map((entry) => entry.variable_name));
}

/** What the schema cannot see: the form has fields, and every name and route the process mentions exists. */
function check(node: WorkflowNode, process: HumanTaskProcess): NodeProblem[] {
  const problems: NodeProblem[] = [];
  if (Object.keys(node.output_schema?.schema ?? {}).length === 0)
    problems.push({ path: 'output_schema', message: 'A human_task form needs at least one field (output variable)' });
  const inputs = inputNames(node);
  for (const field of ['title', 'instructions'] as const) {
    for (const name of new Set(templateNames(process[field] ?? ''))) {
      if (!inputs.has(name))
        problems.push({ path: `process.${field}`, message: `{{ ${name} }} is not an input of the node` });
    }
  }
  const due = process.due;
  if (due && 'input' in due) {
    const dateInput = Object.values(node.input_schema?.schema ?? {}).find((e) => e.variable_name === due.input);
    if (!dateInput) problems.push({ path: 'process.due.input', message: `${due.input} is not an input of the node` });
    else if (!dateInput.allowed_types.every((t) => t.type === 'date'))
      problems.push({ path: 'process.due.input', message: `${due.input} must be of type date only` });
  }
  if (process.on_due && process.on_due.action !== 'fail' && !process.due)
    problems.push({
      path: 'process.on_due',
      message: `on_due ${process.on_due.action} needs a due time (process.due)`,
    });
  if (process.on_due?.action === 'route' && !Object.hasOwn(node.routes ?? {}, process.on_due.route_id))
    problems.push({
      path: 'process.on_due.route_id',
      message: `Route ${process.on_due.route_id} is not declared in the node's routes`,
    });
  return problems;
}

/**
 * The due time in epoch ms: `now` plus the duration, or the date input plus its offset; none when the
 * date input is null (a nullable input left null, an optional one left out), which runs started before
 * that rule replay as the failure it was.
 */
function dueAt(
  process: HumanTaskProcess,
  inputs: Record<string, unknown>,
  now: number,
  inForce: ChangeInForce,
): number | undefined {
  const due = process.due;
  if (!due) return undefined;
  if ('after_ms' in due) return now + due.after_ms;
  const value = inputs[due.input];
  if ((value === null || value === undefined) && inForce('human-task-null-due-date')) return undefined;
  const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    throw new NodeFailure(`The due date input ${due.input} is not a date (got ${JSON.stringify(value ?? null)})`, {
      kind: 'input',
      retryable: false,
    });
  return at + (due.offset_ms ?? 0);
}

/**
 * `human_task`: the case waits for a person. The form is the node's
 * output_schema (a route's bool output is an approve/reject decision); the
 * completed form becomes the node's outputs.
 */
export const humanTaskKind = waitingKind({
  handlerClass: 'human_task',
  nodeType: 'human_task',
  describe:
    'A person decides: process { title, instructions?, assignee, due?, on_due? }; the form is the output_schema, the case waits for its completion.',
  process: processSchema,
  check,
  prepare({ node, process, inputs }, now, inForce) {
    const assignee: TaskAssignee = process.assignee;
    const due = dueAt(process, inputs, now, inForce);
    return {
      title: renderInstructions(process.title, inputs).slice(0, 255),
      instructions: renderInstructions(process.instructions ?? '', inputs),
      assignee,
      ...(due !== undefined ? { dueAt: due } : {}),
      onDue: process.on_due ?? { action: 'fail' },
      form: node.output_schema ?? { schema: {}, variable_addition_allowed: false },
    };
  },
});
