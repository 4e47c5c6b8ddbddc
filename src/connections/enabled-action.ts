import type { ActionVersion } from '../domain/catalog.js';
import type { Connection } from '../domain/connections.js';

/**
 * The contract's connection `actionVersionId` is the "action enabled on this
 * connection": a node may run that action, in every one of its versions (each cut
 * by the integration's authors), but never another action of the same
 * integration, so a key that may only build workflows cannot turn a
 * read-only connection into, say, a delete.
 */
export async function isEnabledAction(
  findActionVersion: (versionId: string) => Promise<ActionVersion | undefined>,
  connection: Pick<Connection, 'actionVersionId'>,
  action: Pick<ActionVersion, 'id' | 'versionId'>,
): Promise<boolean> {
  if (action.versionId === connection.actionVersionId) return true;
  const enabled = await findActionVersion(connection.actionVersionId);
  return enabled?.id === action.id;
}

export const notEnabledMessage = (actionVersionId: string, connectionId: string) =>
  `action version ${actionVersionId} is not the action enabled on connection ${connectionId}`;
