import type { WorkflowNode } from '../graph.js';
import { templatePlaceholder } from '../human-tasks.js';
import type { ValueType } from '../vocabulary.js';
import { activityKind, NodeFailure, type Zod } from './kind.js';
import type { LlmAnswerField } from './services.js';

/** The node error when the worker has no LLM; generation's dry run recognises it (an environment gap, not a bad step). */
export const llmNotConfiguredMessage =
  'No LLM is configured: llm_agent nodes need LLM_BASE_URL (and LLM_API_KEY, LLM_MODEL) set on the worker';

/** Output types an LLM can answer as JSON; files, binaries and free-form objects are not (use json_string). */
const answerableTypes: ReadonlySet<string> = new Set<ValueType>([
  'str',
  'int',
  'float',
  'bool',
  'date',
  'json_string',
  'array',
]);

function processSchema(zod: Zod) {
  return zod
    .object({
      system_prompt: zod.string().min(1).max(32_768),
      /** The user message: `{{ name }}` is replaced by the node input of that variable_name. */
      user_template: zod.string().min(1).max(65_536),
      /** Default: the worker's LLM_MODEL. */
      model: zod.string().min(1).max(200).optional(),
      temperature: zod.number().min(0).max(2).optional(),
      /** What each output variable means, by variable_name: told to the LLM with the answer's schema. */
      output_descriptions: zod.record(zod.string(), zod.string().max(1000)).optional(),
    })
    .strict();
}

function misconfigured(message: string): NodeFailure {
  return new NodeFailure(message, { kind: 'configuration', retryable: false });
}

/** The structured answer's fields: the node's output variables (its output_schema is the answer's schema). */
export function answerFields(node: WorkflowNode, descriptions: Record<string, string> = {}): LlmAnswerField[] {
  const fields = Object.values(node.output_schema?.schema ?? {}).map((entry) => {
    const types = entry.allowed_types.map((t) => t.type);
    const refused = types.filter((t) => !answerableTypes.has(t));
    if (refused.length > 0)
      throw misconfigured(
        `llm_agent output ${entry.variable_name} has type ${refused.join(', ')}; an LLM answers str, int, float, bool, date, json_string or array`,
      );
    const description = descriptions[entry.variable_name];
    return {
      name: entry.variable_name,
      types: types as ValueType[],
      nullable: entry.is_nullable === true,
      ...(description ? { description } : {}),
    };
  });
  if (fields.length === 0)
    throw misconfigured('An llm_agent node needs at least one output variable (its output_schema)');
  return fields;
}

/** The user message: each placeholder replaced by the node input it names (text as is, other values as JSON). */
export function renderTemplate(node: WorkflowNode, template: string, inputs: Record<string, unknown>): string {
  const declared = new Set(Object.values(node.input_schema?.schema ?? {}).map((e) => e.variable_name));
  return template.replace(templatePlaceholder(), (_match, name: string) => {
    if (!declared.has(name)) throw misconfigured(`user_template names {{${name}}}, which is not an input of the node`);
    const value = inputs[name];
    if (value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}

/** Agents wait on a remote model: a minute per attempt, three attempts (429, 5xx, timeouts, malformed answers). */
const llmExecution = { timeoutMs: 60_000, maxAttempts: 3 };

/**
 * `llm_agent`: one structured chat completion on the operator's LLM. The
 * system prompt and the rendered user template are sent with a JSON schema
 * built from the node's output variables; the answer's fields become the
 * node's outputs. Token usage goes to the case audit.
 */
export const llmAgentKind = activityKind({
  handlerClass: 'llm_agent',
  nodeType: 'agent',
  describe:
    'LLM agent: process { system_prompt, user_template, model?, temperature?, output_descriptions? }; the structured answer fills the output variables.',
  process: processSchema,
  defaultExecution: llmExecution,
  async run(context, services) {
    const { node, inputs, process } = context;
    const answer = await services.llm.complete({
      system: process.system_prompt,
      user: renderTemplate(node, process.user_template, inputs),
      ...(process.model ? { model: process.model } : {}),
      ...(process.temperature !== undefined ? { temperature: process.temperature } : {}),
      outputs: answerFields(node, process.output_descriptions),
      timeoutMs: node.execution?.timeout_ms ?? llmExecution.timeoutMs,
    });
    const { prompt_tokens, completion_tokens, total_tokens } = answer.usage;
    const message = `${answer.model} answered: ${total_tokens} tokens (${prompt_tokens} prompt, ${completion_tokens} completion)`;
    return {
      outputs: answer.outputs,
      logs: [{ level: 'info', message, at: new Date().toISOString() }],
      usage: answer.usage,
    };
  },
});
