import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { AuthType } from '../domain/catalog.js';
import type {
  Connection,
  ConnectionStatus,
  NewConnection,
  NewCredential,
  SmokeTestOutcome,
  StoredCredential,
} from '../domain/connections.js';
import type { Db } from './database.js';
import type { ConnectionCredentialTable, ConnectionTable } from './tables/connections.js';

const now = () => new Date().toISOString();

function toConnection(row: Selectable<ConnectionTable>): Connection {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    name: row.name,
    description: row.description,
    integrationId: row.integration_id,
    integrationVersionId: row.integration_version_id,
    actionVersionId: row.action_version_id,
    credentialId: row.credential_row_id,
    status: row.status as ConnectionStatus,
    testActionVersionId: row.test_action_version_id,
    testPassed: row.test_passed === null ? null : row.test_passed === 1,
    testError: row.test_error,
    createdBy: row.created_by,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

function toCredential(row: Selectable<ConnectionCredentialTable>): StoredCredential {
  return {
    id: row.id,
    organizationId: row.organization_id,
    workspaceId: row.workspace_id,
    integrationId: row.integration_id,
    templateId: row.credential_id,
    templateVersionId: row.credential_version_id,
    authType: row.auth_type as AuthType,
    dataCiphertext: row.data_ciphertext,
    tokenGeneration: row.token_generation,
  };
}

/** Reads and writes connections and their encrypted credentials; no rules. */
export class ConnectionRepo {
  constructor(private readonly db: Db) {}

  /**
   * A connection with either a new credential (its ciphertext made by the
   * caller for `credentialId`, so the ciphertext is bound to the row id) or an
   * existing one, in one transaction.
   */
  async create(
    connection: NewConnection,
    credential: { reuse: string } | { id: string; create: NewCredential },
    createdBy: string,
  ): Promise<Connection> {
    const at = now();
    const id = randomUUID();
    return this.db.transaction().execute(async (trx) => {
      let credentialId: string;
      if ('reuse' in credential) credentialId = credential.reuse;
      else {
        const c = credential.create;
        credentialId = credential.id;
        await trx
          .insertInto('connection_credentials')
          .values({
            id: credentialId,
            organization_id: c.organizationId,
            workspace_id: c.workspaceId,
            integration_id: c.integrationId,
            credential_id: c.templateId,
            credential_version_id: c.templateVersionId,
            auth_type: c.authType,
            data_ciphertext: c.dataCiphertext,
            created_by: createdBy,
            created_at: at,
            updated_at: at,
          })
          .execute();
      }
      const row: Selectable<ConnectionTable> = {
        id,
        organization_id: connection.organizationId,
        workspace_id: connection.workspaceId,
        name: connection.name,
        description: connection.description,
        integration_id: connection.integrationId,
        integration_version_id: connection.integrationVersionId,
        action_version_id: connection.actionVersionId,
        credential_row_id: credentialId,
        status: connection.status,
        test_action_version_id: connection.testActionVersionId,
        test_passed: null,
        test_error: null,
        created_by: createdBy,
        created_at: at,
        revoked_at: null,
      };
      await trx.insertInto('connections').values(row).execute();
      return toConnection(row);
    });
  }

  async find(id: string): Promise<Connection | undefined> {
    const row = await this.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toConnection(row);
  }

  async list(
    organizationId: string,
    workspaceId: string,
    page: { limit: number; offset: number },
  ): Promise<Connection[]> {
    const rows = await this.db
      .selectFrom('connections')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return rows.map(toConnection);
  }

  async findCredential(id: string): Promise<StoredCredential | undefined> {
    const row = await this.db.selectFrom('connection_credentials').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toCredential(row);
  }

  async recordTest(connectionId: string, outcome: SmokeTestOutcome): Promise<void> {
    await this.db
      .updateTable('connections')
      .set({ test_passed: outcome.testPassed ? 1 : 0, test_error: outcome.testError })
      .where('id', '=', connectionId)
      .execute();
  }

  /** Marks the connection revoked (once); false when it already was. */
  async revoke(connectionId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('connections')
      .set({ status: 'revoked', revoked_at: now() })
      .where('id', '=', connectionId)
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /**
   * New OAuth tokens (sealed with the rest of the credential): written only
   * if the credential still holds the generation the writer read, which
   * becomes generation + 1. False when another write came first.
   */
  async writeTokens(id: string, expectedGeneration: number, ciphertext: string): Promise<boolean> {
    const result = await this.db
      .updateTable('connection_credentials')
      .set({ data_ciphertext: ciphertext, token_generation: expectedGeneration + 1, updated_at: now() })
      .where('id', '=', id)
      .where('token_generation', '=', expectedGeneration)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Moves the connections sharing a credential from one of `from` to `to`; the ids moved. */
  async moveStatusByCredential(
    credentialId: string,
    from: ConnectionStatus[],
    to: ConnectionStatus,
  ): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('connections')
        .select('id')
        .where('credential_row_id', '=', credentialId)
        .where('status', 'in', from)
        .execute();
      if (rows.length === 0) return [];
      const ids = rows.map((r) => r.id);
      await trx
        .updateTable('connections')
        .set({ status: to })
        .where('id', 'in', ids)
        .where('status', 'in', from)
        .execute();
      return ids;
    });
  }

  /** Whether any connection that is not revoked uses the credential. */
  async credentialInUse(credentialId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('connections')
      .select('id')
      .where('credential_row_id', '=', credentialId)
      .where('status', '!=', 'revoked')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Every stored credential, a page at a time (for re-encryption under a new master key). */
  async credentialPage(afterId: string, limit: number): Promise<StoredCredential[]> {
    const rows = await this.db
      .selectFrom('connection_credentials')
      .selectAll()
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toCredential);
  }

  /** Swaps a credential's ciphertext if it is still the one read (compare-and-set); false otherwise. */
  async replaceCiphertext(id: string, expected: string, next: string): Promise<boolean> {
    const result = await this.db
      .updateTable('connection_credentials')
      .set({ data_ciphertext: next, updated_at: now() })
      .where('id', '=', id)
      .where('data_ciphertext', '=', expected)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}
