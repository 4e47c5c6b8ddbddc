import type { CatalogField } from '../domain/catalog-field.js';
import type { CatalogRepo } from '../store/catalog-repo.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import { planVariableTypes, type PlanVariableType } from '../domain/generation/plan.js';
import type { Tool } from './toolbox.js';

/** Connections looked at for tools; a workspace with more offers its most recent ones. */
const maxToolConnections = 50;

/** A catalog field's first type as a plan variable type (a node reference is an object; files and the rest travel as text). */
function planTypeOf(field: CatalogField): PlanVariableType {
  const type = field.allowedTypes[0]?.type ?? 'str';
  if (type === 'node') return 'object';
  return (planVariableTypes as readonly string[]).includes(type) ? (type as PlanVariableType) : 'str';
}

export interface WorkspaceToolsDeps {
  connections: ConnectionRepo;
  catalog: CatalogRepo;
}

/**
 * The one place generation learns what connected systems a workspace offers:
 * the action enabled on each of its live connections, newest connection
 * first. Prompt runs offer them to the agents as tools; process runs bind
 * the process's integrations to them (process-source.ts).
 */
export class WorkspaceTools {
  constructor(private readonly deps: WorkspaceToolsDeps) {}

  async list(organizationId: string, workspaceId: string): Promise<Tool[]> {
    const connections = await this.deps.connections.list(organizationId, workspaceId, {
      limit: maxToolConnections,
      offset: 0,
    });
    const tools: Tool[] = [];
    // Revoked and pending-authorization connections cannot run.
    for (const connection of connections.filter((c) => c.status === 'connected')) {
      const integration = await this.deps.catalog.findIntegration(connection.integrationId);
      if (!integration) continue;
      const enabled = await this.deps.catalog.findActionVersion(connection.actionVersionId);
      // Only the action enabled on the connection runs with it (enabled-action.ts), at its latest version.
      const actions = (await this.deps.catalog.latestActions(integration)).filter((a) => a.id === enabled?.id);
      for (const action of actions) {
        tools.push({
          connection_id: connection.id,
          integration_id: integration.id,
          integration: integration.name,
          connection: connection.name,
          action_version_id: action.versionId,
          action: action.name,
          description: (action.description ?? '').slice(0, 500),
          inputs: Object.values(action.inputs).map((f) => ({
            name: f.variableName,
            type: planTypeOf(f),
            optional: f.isOptional,
          })),
          outputs: Object.values(action.outputs).map((f) => ({ name: f.variableName, type: planTypeOf(f) })),
        });
      }
    }
    return tools;
  }
}
