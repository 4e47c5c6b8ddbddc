import type { AgentAnswer, Agents, ArchitectRequest, BuildRequest, FileExcerpt } from './agents.js';
import type { LlmClient } from './llm-client.js';
import { planSchema, stepBuildSchema, triageSchema, type Plan, type StepBuild, type TriageVerdict } from './plan.js';
import type { ProcessSource } from './process-types.js';
import { systemPrompt } from './prompts.js';

/** File excerpts as data blocks after the prompt. */
function withFiles(prompt: string, files: FileExcerpt[]): string {
  const blocks = files.map((f) => `--- file ${f.name} (excerpt) ---\n${f.text}\n--- end of file ---`);
  return [`Process description:\n${prompt}`, ...blocks].join('\n\n');
}

/** The process and the integrations the architect may use, as data blocks after the description. */
function processContext(source: ProcessSource): string {
  const integrations = source.bindings.map(({ key, name, actionName, inputs, outputs }) => ({
    key,
    name,
    action: actionName,
    inputs,
    outputs,
  }));
  return [
    `--- discovered process (JSON) ---\n${JSON.stringify(source.process)}\n--- end of process ---`,
    `--- connected integrations (JSON) ---\n${JSON.stringify(integrations)}\n--- end of integrations ---`,
  ].join('\n\n');
}

/** The agents as calls to an OpenAI-compatible LLM with structured output. */
export class LlmAgents implements Agents {
  constructor(private readonly llm: LlmClient) {}

  async triage(prompt: string, files: FileExcerpt[]): Promise<AgentAnswer<TriageVerdict>> {
    return this.llm.structured({
      system: systemPrompt('triage'),
      user: withFiles(prompt, files),
      schemaName: 'triage',
      schema: triageSchema,
    });
  }

  async architect(request: ArchitectRequest): Promise<AgentAnswer<Plan>> {
    const feedback =
      request.feedback.length > 0
        ? `\n\nProblems in your previous plan to fix:\n- ${request.feedback.join('\n- ')}`
        : '';
    const process = request.process;
    return this.llm.structured({
      system: process
        ? `${systemPrompt('architect')}\n\n${systemPrompt('processArchitect')}`
        : systemPrompt('architect'),
      user:
        [withFiles(request.prompt, request.files), ...(process ? [processContext(process)] : [])].join('\n\n') +
        feedback,
      schemaName: 'plan',
      schema: planSchema,
    });
  }

  async build(request: BuildRequest): Promise<AgentAnswer<StepBuild>> {
    const user = JSON.stringify({
      process: request.prompt,
      plan: { inputs: request.plan.inputs.map(({ name, type }) => ({ name, type })), outputs: request.plan.outputs },
      step: request.step,
      feedback: request.feedback,
    });
    return this.llm.structured({
      system: systemPrompt('builder'),
      user,
      schemaName: 'step_build',
      schema: stepBuildSchema,
    });
  }
}
