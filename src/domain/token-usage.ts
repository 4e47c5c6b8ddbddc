/**
 * Tokens an LLM call consumed, as OpenAI-compatible servers report them:
 * recorded per generation task and run, and per llm_agent node in the case
 * audit. Pure: the workflow bundle imports this module.
 */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export const noUsage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}
