import type { FileExcerpt, Plan, PlanStep, StepBuild, TriageVerdict } from '../domain/generation/plan.js';
import type { ProcessSource } from './process-types.js';
import type { TokenUsage } from '../domain/generation/run.js';
import type { Tool } from './toolbox.js';
import type { WorkflowTool } from './workspace-workflows.js';

/** What an agent answered and what it cost. */
export interface AgentAnswer<T> {
  value: T;
  usage: TokenUsage;
}

export interface ArchitectRequest {
  prompt: string;
  files: FileExcerpt[];
  /** Problems the reviewer found in the previous plan, if any. */
  feedback: string[];
  /** The workspace's connected integrations' actions. */
  tools: Tool[];
  /** The workspace's active workflows a step may call. */
  workflows: WorkflowTool[];
  /** The discovered process the run builds from, with its integrations bound to tools. */
  process?: ProcessSource;
}

export interface BuildRequest {
  prompt: string;
  plan: Plan;
  step: PlanStep;
  /** Errors of the previous build of this step (validation, scan, dry run). */
  feedback: string[];
  tools: Tool[];
  workflows: WorkflowTool[];
}

/**
 * The team's thinking, behind one interface: the configured LLM
 * (llm-agents.ts) or the built-in offline planner (offline-planner.ts).
 */
export interface Agents {
  triage(prompt: string, files: FileExcerpt[]): Promise<AgentAnswer<TriageVerdict>>;
  architect(request: ArchitectRequest): Promise<AgentAnswer<Plan>>;
  build(request: BuildRequest): Promise<AgentAnswer<StepBuild>>;
}
