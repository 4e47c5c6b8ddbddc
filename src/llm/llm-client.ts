import { z, type ZodType } from 'zod';
import { noUsage, type TokenUsage } from '../domain/token-usage.js';

export interface LlmSettings {
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
  /** Aborts a call in flight (an activity's cancellation: worker shutdown, a cancelled run). */
  cancellation?: () => AbortSignal | undefined;
}

/**
 * Why a call failed. `retryable` errors (429, 5xx, timeouts, unparseable
 * output) are left to the activity's retry policy; the others (a refusal, a
 * request the server rejects) would fail the same way again.
 */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly kind: 'refused' | 'rejected' | 'rate_limited' | 'unavailable' | 'timeout' | 'malformed',
    readonly retryable: boolean,
    /** Seconds the server asked to wait (429 Retry-After). */
    readonly retryAfterSeconds?: number,
    /** Tokens the call consumed although its answer is unusable (a refusal, malformed output). */
    readonly usage?: TokenUsage,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export interface StructuredCall<T extends ZodType> {
  /** The agent's system prompt (from its versioned prompt file). */
  system: string;
  user: string;
  /** Names the schema for the server (letters, digits, _ and -). */
  schemaName: string;
  schema: T;
  /** Defaults: the settings' model, temperature 0.2 and timeout. */
  model?: string;
  temperature?: number;
  timeoutMs?: number;
}

export interface StructuredResult<T> {
  value: T;
  usage: TokenUsage;
}

const completionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({ content: z.string().nullable().optional(), refusal: z.string().nullable().optional() }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().optional(),
      completion_tokens: z.number().optional(),
      total_tokens: z.number().optional(),
    })
    .optional(),
});

function usageOf(body: z.infer<typeof completionSchema>): TokenUsage {
  const u = body.usage;
  if (!u) return noUsage;
  const prompt = u.prompt_tokens ?? 0;
  const completion = u.completion_tokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: u.total_tokens ?? prompt + completion };
}

/** A 400 that names response_format / json_schema: the server does not do structured output. */
function schemaUnsupported(status: number, text: string): boolean {
  return status === 400 && /response_format|json_schema|structured/i.test(text);
}

/**
 * The most of an LLM answer (or error body) read: a structured answer is a
 * few KB; more means a broken or hostile endpoint, which must not fill the
 * worker's heap.
 */
export const maxAnswerBytes = 4 * 1024 * 1024;

/** The body as text, reading no further than the cap (the rest is cancelled). */
async function cappedText(response: Response): Promise<string> {
  if (!response.body) return '';
  // The DOM-less lib types the body loosely; fetch bodies are bytes.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    size += read.value.byteLength;
    if (size > maxAnswerBytes) {
      await reader.cancel();
      throw new LlmError(`The LLM answer is larger than ${maxAnswerBytes} bytes`, 'malformed', true);
    }
    chunks.push(read.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A response body as JSON (undefined when it is not JSON), within the cap. */
async function cappedJson(response: Response): Promise<unknown> {
  const text = await cappedText(response);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * An OpenAI-compatible chat-completions client (OpenAI, Ollama, vLLM, LM
 * Studio): structured output with a JSON schema, falling back to JSON mode
 * where the server does not support it, a timeout per call, no retries of
 * its own, answers read up to `maxAnswerBytes`. The key is read from
 * settings and sent only in the header.
 */
export class LlmClient {
  constructor(private readonly settings: LlmSettings) {}

  async structured<T extends ZodType>(call: StructuredCall<T>): Promise<StructuredResult<z.infer<T>>> {
    const jsonSchema = z.toJSONSchema(call.schema, { target: 'draft-7' });
    const schemaFormat = {
      type: 'json_schema',
      json_schema: { name: call.schemaName, strict: true, schema: jsonSchema },
    };
    let response = await this.post(call, schemaFormat);
    if (!response.ok) {
      const text = await cappedText(response);
      if (!schemaUnsupported(response.status, text)) throw this.failure(response, text);
      // JSON mode keeps the schema in the instructions instead.
      response = await this.post(
        {
          ...call,
          system: `${call.system}\n\nAnswer with one JSON object matching this JSON schema:\n${JSON.stringify(jsonSchema)}`,
        },
        { type: 'json_object' },
      );
      if (!response.ok) throw this.failure(response, await cappedText(response));
    }
    const parsedBody = completionSchema.safeParse(await cappedJson(response));
    if (!parsedBody.success) throw new LlmError('The LLM answer is not a chat completion', 'malformed', true);
    const usage = usageOf(parsedBody.data);
    const message = parsedBody.data.choices[0]?.message;
    if (message?.refusal)
      throw new LlmError(`The LLM refused: ${message.refusal.slice(0, 500)}`, 'refused', false, undefined, usage);
    const content = message?.content ?? '';
    let json: unknown;
    try {
      json = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
    } catch {
      throw new LlmError(
        `The LLM answer is not JSON (${content.length} characters)`,
        'malformed',
        true,
        undefined,
        usage,
      );
    }
    const value = call.schema.safeParse(json);
    if (!value.success) {
      const issue = value.error.issues[0];
      throw new LlmError(
        `The LLM answer does not match ${call.schemaName}: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}`,
        'malformed',
        true,
        undefined,
        usage,
      );
    }
    return { value: value.data, usage };
  }

  private async post(call: StructuredCall<ZodType>, responseFormat: Record<string, unknown>): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.settings.apiKey) headers.authorization = `Bearer ${this.settings.apiKey}`;
    try {
      return await fetch(`${this.settings.baseUrl.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: this.model(call),
          temperature: call.temperature ?? 0.2,
          messages: [
            { role: 'system', content: call.system },
            { role: 'user', content: call.user },
          ],
          response_format: responseFormat,
        }),
        signal: this.signal(call.timeoutMs ?? this.settings.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
      if (timedOut)
        throw new LlmError(
          `The LLM did not answer within ${call.timeoutMs ?? this.settings.timeoutMs} ms`,
          'timeout',
          true,
        );
      throw new LlmError(
        `The LLM endpoint is unreachable: ${err instanceof Error ? err.message : String(err)}`,
        'unavailable',
        true,
      );
    }
  }

  /** The model a call goes to. */
  model(call: Pick<StructuredCall<ZodType>, 'model'>): string {
    return call.model ?? this.settings.model;
  }

  private signal(timeoutMs: number): AbortSignal {
    const timeout = AbortSignal.timeout(timeoutMs);
    const cancelled = this.settings.cancellation?.();
    return cancelled ? AbortSignal.any([timeout, cancelled]) : timeout;
  }

  private failure(response: Response, text: string): LlmError {
    // The server's text is echoed in part only: it never carries our key, but it may be long.
    const detail = text.slice(0, 300);
    if (response.status === 429) {
      const retryAfter = Number(response.headers.get('retry-after'));
      return new LlmError(
        `The LLM rate-limited the call (429): ${detail}`,
        'rate_limited',
        true,
        Number.isFinite(retryAfter) ? retryAfter : undefined,
      );
    }
    if (response.status >= 500 || response.status === 408)
      return new LlmError(`The LLM failed (${response.status}): ${detail}`, 'unavailable', true);
    return new LlmError(`The LLM rejected the call (${response.status}): ${detail}`, 'rejected', false);
  }
}
