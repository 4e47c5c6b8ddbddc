import type { WorkflowGraph } from '../../domain/graph.js';
import type { ActionRef, CatalogIds, CatalogNames } from '../../workflow-files/catalog-names.js';
import type { Session } from './session.js';

interface Connection {
  id: string;
  name: string;
  integrationVersionId: string;
}

/**
 * Catalog names in the target workspace, through the API: what makes a workflow file portable between
 * workspaces and instances. Connections are listed once per command. `current` is the graph of the workflow the
 * file updates: the code nodes it runs are the ones a declaration updates.
 */
export function apiCatalog(session: Session, current?: WorkflowGraph): { ids: CatalogIds; names: CatalogNames } {
  let connections: Promise<Connection[]> | undefined;
  const listConnections = () =>
    (connections ??= (async () => {
      const workspaceId = await session.workspaceId();
      const all: Connection[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = await session.call(
          session.client.GET('/api/v1/workspace/{workspaceId}/connections', {
            params: { path: { workspaceId }, query: { limit: 100, offset } },
          }),
        );
        all.push(...page.connections.filter((c) => c.revokedAt === null));
        if (page.connections.length < 100) return all;
      }
    })());
  const actions = (integrationVersionId: string) =>
    session.call(
      session.client.GET('/api/v1/integration/v/{integrationVersionId}', {
        params: { path: { integrationVersionId } },
      }),
    );

  const ids: CatalogIds = {
    // No GET of a code node: what the workflow runs (its ids and the declaration's fingerprint) says what is there.
    async code(node, { body, sha256 }) {
      const running = Object.values(current?.nodes ?? {}).find((n) => n.name === node)?.process ?? {};
      const { code_id: codeId, code_version_id: versionId, source_sha256: registered } = running;
      if (typeof codeId === 'string' && typeof versionId === 'string' && registered === sha256)
        return { found: { codeId, versionId } };
      const saved = await session.call(
        typeof codeId === 'string'
          ? session.client.PATCH('/api/v1/code/{codeId}', { params: { path: { codeId } }, body })
          : session.client.POST('/api/v1/code', { body }),
      );
      return { found: { codeId: saved.id, versionId: saved.versionId } };
    },
    async action(connection, action) {
      const all = await listConnections();
      const found = all.find((c) => c.name === connection);
      if (!found) {
        const known = all.map((c) => `"${c.name}"`).join(', ') || 'none';
        return { missing: `no connection named "${connection}" in the workspace (connections: ${known})` };
      }
      const integration = await actions(found.integrationVersionId);
      const match = integration.actions.find((a) => a.name === action);
      if (!match) {
        const known = integration.actions.map((a) => `"${a.name}"`).join(', ') || 'none';
        return {
          missing: `connection "${connection}" (${integration.name}) has no action "${action}" (actions: ${known})`,
        };
      }
      return { found: { connectionId: found.id, actionVersionId: match.versionId } };
    },
    async workflow(name) {
      const [only, ...others] = await session.workflowsNamed(name);
      if (!only) return { missing: `no workflow named "${name}" in the workspace (apply its file first)` };
      if (others.length > 0) return { missing: `${others.length + 1} workflows are named "${name}" in the workspace` };
      return { found: only.workflowId };
    },
  };

  const names: CatalogNames = {
    async action(ref: ActionRef) {
      const connection = (await listConnections()).find((c) => c.id === ref.connectionId);
      if (!connection) return undefined;
      const action = (await actions(connection.integrationVersionId)).actions.find(
        (a) => a.versionId === ref.actionVersionId,
      );
      return action ? { connection: connection.name, action: action.name } : undefined;
    },
    async workflow(id) {
      const callee = await session.call(
        session.client.GET('/api/v1/workflow/{workflowId}', { params: { path: { workflowId: id } } }),
      );
      return callee.name;
    },
  };
  return { ids, names };
}
