import { z, type ZodType } from 'zod';
import type { Config } from '../config/config.js';
import { NodeFailure } from '../domain/node-kinds/kind.js';
import { llmNotConfiguredMessage } from '../domain/node-kinds/llm-agent.js';
import type { LlmAnswerField, LlmNodeAnswer, LlmNodeRequest, LlmPort } from '../domain/node-kinds/services.js';
import type { ValueType } from '../domain/vocabulary.js';
import { LlmClient, LlmError } from './llm-client.js';

/** JSON an LLM can give for a variable type (strict structured output: arrays of scalars, no free-form objects). */
function typeSchema(type: ValueType): ZodType {
  switch (type) {
    case 'int':
      return z.int();
    case 'float':
      return z.number();
    case 'bool':
      return z.boolean();
    case 'date':
      return z.string().describe('an ISO 8601 date');
    case 'json_string':
      return z.string().describe('JSON text');
    case 'array':
      return z.array(z.union([z.string(), z.number(), z.boolean()]));
    default:
      return z.string();
  }
}

function fieldSchema(field: LlmAnswerField): ZodType {
  const options = [...field.types.map(typeSchema), ...(field.nullable ? [z.null()] : [])];
  const [first, ...rest] = options;
  const schema = rest.length === 0 && first ? first : z.union(options);
  return field.description ? schema.describe(field.description) : schema;
}

/** The answer's schema: one required property per output variable. */
export function answerSchema(fields: LlmAnswerField[]): ZodType<Record<string, unknown>> {
  return z.object(Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])));
}

/**
 * The `llm` port of llm_agent nodes, on the worker: one structured completion
 * on the operator's LLM endpoint. The endpoint and key are operator
 * configuration, never tenant input, so the call goes straight to it (not
 * through the outbound policy, which would refuse a local Ollama or vLLM).
 * The key is read here, never handed to the workflow.
 */
export class LlmNodes implements LlmPort {
  private readonly client: LlmClient | undefined;

  constructor(settings: Config['llm']) {
    this.client = settings.baseUrl
      ? new LlmClient({
          baseUrl: settings.baseUrl,
          apiKey: settings.apiKey,
          model: settings.model,
          timeoutMs: settings.timeoutMs,
        })
      : undefined;
  }

  async complete(request: LlmNodeRequest): Promise<LlmNodeAnswer> {
    if (!this.client) throw new NodeFailure(llmNotConfiguredMessage, { kind: 'configuration', retryable: false });
    const call = {
      system: request.system,
      user: request.user,
      schemaName: 'node_output',
      schema: answerSchema(request.outputs),
      model: request.model,
      temperature: request.temperature,
      timeoutMs: request.timeoutMs,
    };
    try {
      const answer = await this.client.structured(call);
      return { outputs: answer.value, usage: answer.usage, model: this.client.model(call) };
    } catch (err) {
      if (!(err instanceof LlmError)) throw err;
      // 429, 5xx, timeouts and malformed answers may go better next attempt; a refusal or another 4xx will not.
      throw new NodeFailure(err.message, {
        kind: `llm_${err.kind}`,
        retryable: err.retryable,
        ...(err.retryAfterSeconds !== undefined ? { retryAfterMs: err.retryAfterSeconds * 1000 } : {}),
        ...(err.usage ? { usage: err.usage } : {}),
      });
    }
  }
}
