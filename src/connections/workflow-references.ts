import type { AuthContext } from '../domain/auth-context.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type { WorkflowGraph } from '../domain/graph.js';
import type { GraphProblem } from '../domain/graph-validation.js';
import { integrationActionKind } from '../domain/node-kinds/integration-action.js';
import { handlerClassName } from '../domain/vocabulary.js';
import { DomainError } from '../errors.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import { isEnabledAction, notEnabledMessage } from './enabled-action.js';

/**
 * Save-time checks of a workflow's integration_action nodes: the connection
 * is a live one of the workflow's own workspace, and the action version is
 * visible to the key and is the action enabled on the connection. Unknown
 * and foreign ids read alike, so a save discloses nothing about other
 * tenants. (The worker checks the same again at run time.)
 */
export interface GraphReferences {
  connections: ConnectionRepo;
  catalog: CatalogService;
}

export async function integrationActionProblems(
  deps: GraphReferences,
  auth: AuthContext,
  workspaceId: string,
  graph: WorkflowGraph,
): Promise<GraphProblem[]> {
  const problems: GraphProblem[] = [];
  for (const [key, node] of Object.entries(graph.nodes)) {
    if (handlerClassName(node) !== integrationActionKind.handlerClass) continue;
    const connectionId = String(node.process?.connection_id);
    const actionVersionId = String(node.process?.action_version_id);
    const connection = await deps.connections.find(connectionId);
    if (connection?.organizationId !== auth.organizationId || connection.workspaceId !== workspaceId) {
      problems.push({
        path: `nodes.${key}.process.connection_id`,
        message: `connection ${connectionId} does not exist in this workspace`,
      });
      continue;
    }
    if (connection.status === 'revoked')
      problems.push({ path: `nodes.${key}.process.connection_id`, message: `connection ${connectionId} is revoked` });
    const visibleAction = (id: string) =>
      deps.catalog.actionVersion(auth, id).catch((err: unknown) => {
        if (err instanceof DomainError && err.errorCode === 'NOT_FOUND') return undefined;
        throw err;
      });
    const action = await visibleAction(actionVersionId);
    if (!action || !(await isEnabledAction(visibleAction, connection, action))) {
      problems.push({
        path: `nodes.${key}.process.action_version_id`,
        message: notEnabledMessage(actionVersionId, connectionId),
      });
    }
  }
  return problems;
}
