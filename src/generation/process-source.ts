import type { AuthContext } from '../domain/auth-context.js';
import type { DiscoveredProcess, DiscoveryService } from '../discovery/discovery-service.js';
import type { TaggedItem } from '../domain/discovery-process.js';
import { DomainError } from '../errors.js';
import type { ProcessRef } from '../domain/generation/run.js';
import type { ProcessSource, SourceProcess, SourceStep, IntegrationBinding } from './process-types.js';
import type { WorkspaceTools } from './workspace-tools.js';

/** Bounds on what a run carries of a process (it travels in Temporal history with the run's input). */
export const processSourceLimits = {
  steps: 100,
  text: 1000,
  item: 255,
  itemsPerList: 20,
  bytes: 256 * 1024,
} as const;

/** Integration names compare without case and extra spacing, as the read's merge does. */
export function integrationKey(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

const clip = (text: string | null, max: number = processSourceLimits.text): string | null =>
  text === null ? null : text.slice(0, max);
const texts = (items: TaggedItem[]): string[] =>
  items.slice(0, processSourceLimits.itemsPerList).map((item) => item.text.slice(0, processSourceLimits.item));
const tagged = (items: TaggedItem[]): TaggedItem[] =>
  items.slice(0, processSourceLimits.itemsPerList).map((item) => ({
    id: item.id,
    text: item.text.slice(0, processSourceLimits.item),
  }));

/** What the planners use of a process: structure, names, data and integrations (no owners, times or pain points). */
function compact(process: DiscoveredProcess): SourceProcess {
  const steps: SourceStep[] = process.steps.map((step) => ({
    id: step.id,
    name: step.name,
    description: clip(step.description),
    stepType: step.stepType,
    stepOrder: step.stepOrder,
    branchId: step.branchId,
    branchLabel: step.branchLabel,
    branchSourceStepId: step.branchSourceStepId,
    branchRejoinStepId: step.branchRejoinStepId,
    branchOrder: step.branchOrder,
    inputs: texts(step.inputs),
    outputs: texts(step.outputs),
    integrations: tagged(step.integrations),
    rules: texts(step.rules),
  }));
  return {
    name: process.name,
    description: clip(process.description),
    inputs: texts(process.processInputs),
    outputs: texts(process.processOutputs),
    rules: texts(process.processRules),
    integrations: tagged(process.processIntegrations),
    steps,
    edges: process.customEdges.map((edge) => ({
      source: edge.sourceStepId,
      target: edge.targetStepId,
      label: edge.label ?? null,
    })),
  };
}

export interface ProcessSourceDeps {
  discovery: DiscoveryService;
  tools: WorkspaceTools;
}

/**
 * What a generation run takes from a discovered process: the process (read
 * with the discovery read's own checks), bounded, and the connections of the
 * target workspace that can carry its integrations.
 */
export class ProcessSources {
  constructor(private readonly deps: ProcessSourceDeps) {}

  async load(
    auth: AuthContext,
    workspaceId: string,
    processId: string,
    processVersionId: string | undefined,
  ): Promise<ProcessSource> {
    const process = await this.deps.discovery.read(auth, processId, processVersionId);
    if (process.steps.length === 0) throw DomainError.badRequest(`Process ${processId} has no steps to build from`);
    if (process.steps.length > processSourceLimits.steps)
      throw DomainError.badRequest(
        `Process ${processId} has ${process.steps.length} steps; generation builds from at most ${processSourceLimits.steps} (split it into sub-processes)`,
      );
    const source: ProcessSource = {
      ref: processRef(process),
      process: compact(process),
      bindings: await this.bindings(auth, workspaceId, process),
    };
    const bytes = Buffer.byteLength(JSON.stringify(source));
    if (bytes > processSourceLimits.bytes)
      throw DomainError.badRequest(
        `Process ${processId} is too large to generate from (${bytes} bytes of steps and lists, at most ${processSourceLimits.bytes})`,
      );
    return source;
  }

  /**
   * One binding per process integration the workspace has a live connection
   * for: the connection's integration is named like the entry (case and
   * spacing aside) or has the entry's id. The workspace's tools are the ones
   * a prompt run offers; the first of a matching connection (the newest
   * connection's own action) is the one the step runs.
   */
  private async bindings(
    auth: AuthContext,
    workspaceId: string,
    process: DiscoveredProcess,
  ): Promise<IntegrationBinding[]> {
    const wanted = process.processIntegrations;
    if (wanted.length === 0) return [];
    const tools = await this.deps.tools.list(auth.organizationId, workspaceId);
    const bindings: IntegrationBinding[] = [];
    for (const entry of wanted) {
      const key = integrationKey(entry.text);
      if (bindings.some((b) => b.key === key)) continue;
      const tool = tools.find((t) => integrationKey(t.integration) === key || t.integration_id === entry.id);
      if (tool) bindings.push({ key, name: entry.text, tool });
    }
    return bindings;
  }
}

function processRef(process: DiscoveredProcess): ProcessRef {
  return {
    processId: process.id,
    processVersionId: process.processVersionId,
    versionNumber: process.versionNumber,
    name: process.name,
    processUpdatedAt: process.updatedAt,
  };
}
