import type { FileExcerpt } from '../domain/generation/plan.js';
import type { AgentAnswer, Agents, ArchitectRequest, BuildRequest } from './agents.js';
import type { LlmClient } from '../llm/llm-client.js';
import {
  planSchema,
  stepBuildSchema,
  triageSchema,
  type Plan,
  type StepBuild,
  type TriageVerdict,
} from '../domain/generation/plan.js';
import type { IntegrationBinding, ProcessSource } from './process-types.js';
import { systemPrompt } from './prompts.js';
import type { Tool } from './toolbox.js';
import type { WorkflowTool } from './workspace-workflows.js';

/** File excerpts as data blocks after the prompt. */
function withFiles(prompt: string, files: FileExcerpt[]): string {
  const blocks = files.map((f) => `--- file ${f.name} (excerpt) ---\n${f.text}\n--- end of file ---`);
  return [`Process description:\n${prompt}`, ...blocks].join('\n\n');
}

/**
 * The workspace's connected actions as a data block the architect may plan
 * with (none: no block); a tool carrying a discovered process's integration
 * has that binding's key. No ids: builders get them for the steps they fill.
 */
function withTools(tools: Tool[], bindings: IntegrationBinding[]): string {
  if (tools.length === 0) return '';
  const list = tools.map(({ connection_id, action_version_id, integration, action, description, inputs, outputs }) => {
    const key = bindings.find(
      (b) => b.tool.connection_id === connection_id && b.tool.action_version_id === action_version_id,
    )?.key;
    return { ...(key ? { key } : {}), integration, action, description, inputs, outputs };
  });
  return `\n\nConnected integrations of the workspace (for integration_action steps):\n${JSON.stringify(list)}`;
}

/** The workspace's workflows a call_workflow step may run, as a data block (none: no block); no ids, as for tools. */
function withWorkflows(workflows: WorkflowTool[]): string {
  if (workflows.length === 0) return '';
  const list = workflows.map(({ name, description, inputs, outputs }) => ({ name, description, inputs, outputs }));
  return `\n\nWorkflows of the workspace (for call_workflow steps):\n${JSON.stringify(list)}`;
}

/** The discovered process a run builds from, as a data block after the description. */
function withProcess(source: ProcessSource | undefined): string {
  if (!source) return '';
  return `\n\n--- discovered process (JSON) ---\n${JSON.stringify(source.process)}\n--- end of process ---`;
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
        withFiles(request.prompt, request.files) +
        withProcess(process) +
        withTools(request.tools, process?.bindings ?? []) +
        withWorkflows(request.workflows) +
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
      // Ids only where the builder must pick one: the integration_action and call_workflow steps.
      ...(request.step.kind === 'integration_action' ? { tools: request.tools } : {}),
      ...(request.step.kind === 'call_workflow' ? { workflows: request.workflows } : {}),
    });
    return this.llm.structured({
      system: systemPrompt('builder'),
      user,
      schemaName: 'step_build',
      schema: stepBuildSchema,
    });
  }
}
