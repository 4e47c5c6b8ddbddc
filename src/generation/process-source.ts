import type { AuthContext } from '../auth/auth-context.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type { CatalogField } from '../domain/catalog-field.js';
import type { DiscoveredProcess, DiscoveryService } from '../discovery/discovery-service.js';
import type { TaggedItem } from '../discovery/process-schema.js';
import { DomainError } from '../errors.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import type { Connection } from '../connections/types.js';
import type { PlanVariableType } from './plan.js';
import type { ProcessRef, ProcessSource, SourceProcess, SourceStep, IntegrationBinding } from './process-types.js';

/** Bounds on what a run carries of a process (it travels in Temporal history with the run's input). */
export const processSourceLimits = {
  steps: 100,
  text: 1000,
  item: 255,
  itemsPerList: 20,
  bytes: 256 * 1024,
  connections: 1000,
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

/** A catalog field's type as a plan variable type (the plan knows fewer types than the catalog). */
function planType(field: CatalogField): PlanVariableType {
  const type = field.allowedTypes[0]?.type ?? 'str';
  if (type === 'int' || type === 'float' || type === 'bool' || type === 'date' || type === 'array') return type;
  if (type === 'object' || type === 'node') return 'object';
  return 'str';
}

const fields = (map: Record<string, CatalogField>) =>
  Object.values(map).map((field) => ({ name: field.variableName, type: planType(field) }));

export interface ProcessSourceDeps {
  discovery: DiscoveryService;
  connections: ConnectionRepo;
  catalog: CatalogService;
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
   * spacing aside) or has the entry's id. The connection's own action is the
   * one the step runs; the newest connection wins.
   */
  private async bindings(
    auth: AuthContext,
    workspaceId: string,
    process: DiscoveredProcess,
  ): Promise<IntegrationBinding[]> {
    const wanted = process.processIntegrations;
    if (wanted.length === 0) return [];
    const bindings: IntegrationBinding[] = [];
    for (const connection of await this.liveConnections(auth, workspaceId)) {
      const detail = await this.deps.catalog.integration(auth, connection.integrationId).catch(notVisible);
      const action = await this.deps.catalog.actionVersion(auth, connection.actionVersionId).catch(notVisible);
      if (!detail || !action) continue;
      const name = integrationKey(detail.integration.name);
      for (const entry of wanted) {
        const key = integrationKey(entry.text);
        if (bindings.some((b) => b.key === key)) continue;
        if (key !== name && entry.id !== detail.integration.id) continue;
        bindings.push({
          key,
          name: entry.text,
          connectionId: connection.id,
          actionVersionId: action.versionId,
          actionName: action.name,
          inputs: fields(action.inputs),
          outputs: fields(action.outputs),
        });
      }
    }
    return bindings;
  }

  /** The workspace's connected connections, newest first (revoked and pending-authorization ones cannot run). */
  private async liveConnections(auth: AuthContext, workspaceId: string): Promise<Connection[]> {
    const live: Connection[] = [];
    const limit = 100;
    for (let offset = 0; offset < processSourceLimits.connections; offset += limit) {
      const page = await this.deps.connections.list(auth.organizationId, workspaceId, { limit, offset });
      live.push(...page.filter((c) => c.status === 'connected'));
      if (page.length < limit) break;
    }
    return live;
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

/** A catalog entry the key cannot see is no binding (and says nothing more). */
function notVisible(err: unknown): undefined {
  if (err instanceof DomainError && err.errorCode === 'NOT_FOUND') return undefined;
  throw err;
}
