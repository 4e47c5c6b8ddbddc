import { randomUUID } from 'node:crypto';
import type { Selectable, Transaction } from 'kysely';
import type { CatalogField } from '../domain/catalog-field.js';
import type {
  ActionContent,
  ActionVersion,
  AuthType,
  CredentialContent,
  CredentialField,
  CredentialStatus,
  CredentialVersion,
  IntegrationContent,
  IntegrationCreation,
  IntegrationDraft,
  IntegrationStatus,
  IntegrationVersion,
  Provider,
  RequiredPlan,
} from '../domain/catalog.js';
import type { Database } from './schema.js';
import type { Db } from './database.js';
import type {
  CredentialTemplateTable,
  CredentialTemplateVersionTable,
  IntegrationActionTable,
  IntegrationActionVersionTable,
  IntegrationTable,
  IntegrationVersionTable,
  ProviderTable,
} from './tables/catalog.js';

type Trx = Transaction<Database>;
type HeadTable = 'integrations' | 'integration_actions' | 'credential_templates';

const now = () => new Date().toISOString();

/** Who a write is attributed to: the key's user, or null for the operator. */
export type Author = string | null;

export interface IdempotencyClaim {
  organizationId: string;
  keyHash: string;
  requestHash: string;
  /** Stored keys older than this are expired and may be reused. */
  notBefore: string;
}

export interface StoredIdempotency {
  requestHash: string;
  result: IntegrationCreation;
}

/** Thrown inside the creation transaction to roll it back when a concurrent request claimed the key first. */
class KeyTaken extends Error {}

function toProvider(row: Selectable<ProviderTable>): Provider {
  return { id: row.id, organizationId: row.organization_id, name: row.name, createdAt: row.created_at };
}

function toIntegration(
  head: Selectable<IntegrationTable>,
  row: Selectable<IntegrationVersionTable>,
): IntegrationVersion {
  return {
    id: head.id,
    versionId: row.id,
    versionNumber: row.version_number,
    organizationId: head.organization_id,
    providerId: head.provider_id,
    name: row.name,
    description: row.description,
    icon: row.icon,
    category: JSON.parse(row.category) as string[],
    requiredPlan: row.required_plan as RequiredPlan,
    status: row.status as IntegrationStatus,
    isNew: row.is_new === 1,
    isPopular: row.is_popular === 1,
    isBeta: row.is_beta === 1,
    createdAt: head.created_at,
    versionCreatedAt: row.created_at,
  };
}

function toAction(
  head: Selectable<IntegrationActionTable>,
  organizationId: string | null,
  row: Selectable<IntegrationActionVersionTable>,
): ActionVersion {
  return {
    id: head.id,
    versionId: row.id,
    versionNumber: row.version_number,
    integrationId: head.integration_id,
    organizationId,
    name: row.name,
    endpoint: row.endpoint,
    description: row.description,
    inputs: JSON.parse(row.inputs) as Record<string, CatalogField>,
    outputs: JSON.parse(row.outputs) as Record<string, CatalogField>,
    code: row.code,
    createdAt: head.created_at,
    versionCreatedAt: row.created_at,
  };
}

function toCredential(
  head: Selectable<CredentialTemplateTable>,
  organizationId: string | null,
  row: Selectable<CredentialTemplateVersionTable>,
): CredentialVersion {
  return {
    id: head.id,
    versionId: row.id,
    versionNumber: row.version_number,
    integrationId: head.integration_id,
    organizationId,
    name: row.name,
    description: row.description,
    icon: row.icon,
    authType: head.auth_type as AuthType,
    status: row.status as CredentialStatus,
    inputs: JSON.parse(row.inputs) as Record<string, CredentialField>,
    createdAt: head.created_at,
    versionCreatedAt: row.created_at,
  };
}

function integrationRow(
  integrationId: string,
  versionNumber: number,
  author: Author,
  content: IntegrationContent,
  at: string,
): Selectable<IntegrationVersionTable> {
  return {
    id: randomUUID(),
    integration_id: integrationId,
    version_number: versionNumber,
    name: content.name,
    description: content.description,
    icon: content.icon,
    category: JSON.stringify(content.category),
    required_plan: content.requiredPlan,
    status: content.status,
    is_new: content.isNew ? 1 : 0,
    is_popular: content.isPopular ? 1 : 0,
    is_beta: content.isBeta ? 1 : 0,
    created_by: author,
    created_at: at,
  };
}

function actionRow(
  actionId: string,
  versionNumber: number,
  author: Author,
  content: ActionContent,
  at: string,
): Selectable<IntegrationActionVersionTable> {
  return {
    id: randomUUID(),
    action_id: actionId,
    version_number: versionNumber,
    name: content.name,
    endpoint: content.endpoint,
    description: content.description,
    inputs: JSON.stringify(content.inputs),
    outputs: JSON.stringify(content.outputs),
    code: content.code,
    created_by: author,
    created_at: at,
  };
}

function credentialRow(
  credentialId: string,
  versionNumber: number,
  author: Author,
  content: CredentialContent,
  at: string,
): Selectable<CredentialTemplateVersionTable> {
  return {
    id: randomUUID(),
    credential_id: credentialId,
    version_number: versionNumber,
    name: content.name,
    description: content.description,
    icon: content.icon,
    status: content.status,
    inputs: JSON.stringify(content.inputs),
    created_by: author,
    created_at: at,
  };
}

/**
 * The integration catalog: providers, integrations, actions and credential
 * templates, each versioned (immutable version rows under a stable id).
 * Reads and writes only; the rules are in src/catalog/catalog-service.ts.
 */
export class CatalogRepo {
  constructor(private readonly db: Db) {}

  async createProvider(organizationId: string | null, author: Author, name: string): Promise<Provider> {
    const row = { id: randomUUID(), organization_id: organizationId, name, created_by: author, created_at: now() };
    await this.db.insertInto('providers').values(row).execute();
    return toProvider(row);
  }

  /** The providers of an organization, or the service's own with null. */
  async listProviders(organizationId: string | null): Promise<Provider[]> {
    const query = this.db.selectFrom('providers').selectAll();
    const rows = await (
      organizationId === null
        ? query.where('organization_id', 'is', null)
        : query.where('organization_id', '=', organizationId)
    )
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toProvider);
  }

  async findProvider(id: string): Promise<Provider | undefined> {
    const row = await this.db.selectFrom('providers').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toProvider(row);
  }

  /** A live idempotency record of this organization's key. */
  async findIdempotency(
    organizationId: string,
    keyHash: string,
    notBefore: string,
  ): Promise<StoredIdempotency | undefined> {
    const row = await this.db
      .selectFrom('integration_idempotency')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('key_hash', '=', keyHash)
      .where('created_at', '>=', notBefore)
      .executeTakeFirst();
    return row && { requestHash: row.request_hash, result: JSON.parse(row.result) as IntegrationCreation };
  }

  /**
   * Creates an integration with its actions and optional credential in one
   * transaction: all or nothing. With a claim, the idempotency record is
   * written in the same transaction; 'key-taken' means another request holds
   * the key (nothing of this one was kept).
   */
  async createIntegration(
    organizationId: string | null,
    author: Author,
    draft: IntegrationDraft,
  ): Promise<IntegrationCreation>;
  async createIntegration(
    organizationId: string | null,
    author: Author,
    draft: IntegrationDraft,
    claim: IdempotencyClaim,
  ): Promise<IntegrationCreation | 'key-taken'>;
  async createIntegration(
    organizationId: string | null,
    author: Author,
    draft: IntegrationDraft,
    claim?: IdempotencyClaim,
  ): Promise<IntegrationCreation | 'key-taken'> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const at = now();
        const head: Selectable<IntegrationTable> = {
          id: randomUUID(),
          organization_id: organizationId,
          provider_id: draft.providerId,
          latest_version_number: 1,
          created_by: author,
          created_at: at,
          updated_at: at,
        };
        const version = integrationRow(head.id, 1, author, draft.content, at);
        await trx.insertInto('integrations').values(head).execute();
        await trx.insertInto('integration_versions').values(version).execute();
        const createdActions: IntegrationCreation['createdActions'] = [];
        for (const [position, action] of draft.actions.entries()) {
          const created = await this.insertAction(trx, head.id, organizationId, author, action, at, position);
          createdActions.push({ actionId: created.id, actionVersionId: created.versionId, name: created.name });
        }
        const credential =
          draft.credential && (await this.insertCredential(trx, head.id, organizationId, author, draft.credential, at));
        const result: IntegrationCreation = {
          integration: toIntegration(head, version),
          createdActions,
          createdCredential: credential
            ? { credentialId: credential.id, credentialVersionId: credential.versionId, name: credential.name }
            : null,
        };
        if (claim) await this.claimKey(trx, claim, result, at);
        return result;
      });
    } catch (err) {
      if (err instanceof KeyTaken) return 'key-taken';
      throw err;
    }
  }

  /** Records the key with the result; a live record already there (a concurrent twin) rolls the creation back. */
  private async claimKey(trx: Trx, claim: IdempotencyClaim, result: IntegrationCreation, at: string): Promise<void> {
    await trx
      .deleteFrom('integration_idempotency')
      .where('organization_id', '=', claim.organizationId)
      .where('key_hash', '=', claim.keyHash)
      .where('created_at', '<', claim.notBefore)
      .execute();
    const inserted = await trx
      .insertInto('integration_idempotency')
      .values({
        organization_id: claim.organizationId,
        key_hash: claim.keyHash,
        request_hash: claim.requestHash,
        result: JSON.stringify(result),
        created_at: at,
      })
      .onConflict((oc) => oc.columns(['organization_id', 'key_hash']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) throw new KeyTaken();
  }

  private async insertAction(
    trx: Trx,
    integrationId: string,
    organizationId: string | null,
    author: Author,
    content: ActionContent,
    at: string,
    position: number,
  ): Promise<ActionVersion> {
    const head: Selectable<IntegrationActionTable> = {
      id: randomUUID(),
      integration_id: integrationId,
      position,
      latest_version_number: 1,
      created_at: at,
      updated_at: at,
    };
    const row = actionRow(head.id, 1, author, content, at);
    await trx.insertInto('integration_actions').values(head).execute();
    await trx.insertInto('integration_action_versions').values(row).execute();
    return toAction(head, organizationId, row);
  }

  /** undefined when the integration already holds a credential of this authType. */
  private async insertCredential(
    trx: Trx,
    integrationId: string,
    organizationId: string | null,
    author: Author,
    content: CredentialContent,
    at: string,
  ): Promise<CredentialVersion | undefined> {
    const head: Selectable<CredentialTemplateTable> = {
      id: randomUUID(),
      integration_id: integrationId,
      auth_type: content.authType,
      latest_version_number: 1,
      created_at: at,
      updated_at: at,
    };
    const inserted = await trx
      .insertInto('credential_templates')
      .values(head)
      .onConflict((oc) => oc.columns(['integration_id', 'auth_type']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) return undefined;
    const row = credentialRow(head.id, 1, author, content, at);
    await trx.insertInto('credential_template_versions').values(row).execute();
    return toCredential(head, organizationId, row);
  }

  /**
   * Adds an action to an integration unless it already holds `maxActions`;
   * touching the integration's row first serializes concurrent additions
   * (a row lock on Postgres), so the count cannot be raced past the limit.
   */
  async addAction(
    integration: Pick<IntegrationVersion, 'id' | 'organizationId'>,
    author: Author,
    content: ActionContent,
    maxActions: number,
  ): Promise<ActionVersion | 'full'> {
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('integrations').set({ updated_at: at }).where('id', '=', integration.id).execute();
      const { n } = await trx
        .selectFrom('integration_actions')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .where('integration_id', '=', integration.id)
        .executeTakeFirstOrThrow();
      if (Number(n) >= maxActions) return 'full';
      // Actions are never removed, so the count is the next place.
      return this.insertAction(trx, integration.id, integration.organizationId, author, content, at, Number(n));
    });
  }

  /** Adds a credential template to an integration; undefined when its authType is taken (409). */
  async addCredential(
    integration: Pick<IntegrationVersion, 'id' | 'organizationId'>,
    author: Author,
    content: CredentialContent,
  ): Promise<CredentialVersion | undefined> {
    return this.db
      .transaction()
      .execute((trx) => this.insertCredential(trx, integration.id, integration.organizationId, author, content, now()));
  }

  /**
   * Moves a head from `base` to the next version number; false when another
   * update got there first, so no update is merged onto a stale base.
   */
  private async bumpVersion(trx: Trx, table: HeadTable, id: string, base: number, at: string): Promise<boolean> {
    const moved = await trx
      .updateTable(table)
      .set({ latest_version_number: base + 1, updated_at: at })
      .where('id', '=', id)
      .where('latest_version_number', '=', base)
      .executeTakeFirst();
    return Number(moved.numUpdatedRows) === 1;
  }

  async addIntegrationVersion(
    base: IntegrationVersion,
    author: Author,
    content: IntegrationContent,
  ): Promise<IntegrationVersion | undefined> {
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.bumpVersion(trx, 'integrations', base.id, base.versionNumber, at))) return undefined;
      const row = integrationRow(base.id, base.versionNumber + 1, author, content, at);
      await trx.insertInto('integration_versions').values(row).execute();
      const head = await trx.selectFrom('integrations').selectAll().where('id', '=', base.id).executeTakeFirstOrThrow();
      return toIntegration(head, row);
    });
  }

  async addActionVersion(
    base: ActionVersion,
    author: Author,
    content: ActionContent,
  ): Promise<ActionVersion | undefined> {
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.bumpVersion(trx, 'integration_actions', base.id, base.versionNumber, at))) return undefined;
      const row = actionRow(base.id, base.versionNumber + 1, author, content, at);
      await trx.insertInto('integration_action_versions').values(row).execute();
      const head = await trx
        .selectFrom('integration_actions')
        .selectAll()
        .where('id', '=', base.id)
        .executeTakeFirstOrThrow();
      return toAction(head, base.organizationId, row);
    });
  }

  async addCredentialVersion(
    base: CredentialVersion,
    author: Author,
    content: CredentialContent,
  ): Promise<CredentialVersion | undefined> {
    const at = now();
    return this.db.transaction().execute(async (trx) => {
      if (!(await this.bumpVersion(trx, 'credential_templates', base.id, base.versionNumber, at))) return undefined;
      const row = credentialRow(base.id, base.versionNumber + 1, author, content, at);
      await trx.insertInto('credential_template_versions').values(row).execute();
      const head = await trx
        .selectFrom('credential_templates')
        .selectAll()
        .where('id', '=', base.id)
        .executeTakeFirstOrThrow();
      return toCredential(head, base.organizationId, row);
    });
  }

  /** A page of the latest versions of this organization's and the service's integrations, newest first. */
  async listIntegrations(
    organizationId: string,
    page: { limit: number; offset: number },
  ): Promise<IntegrationVersion[]> {
    const heads = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where((eb) => eb.or([eb('organization_id', '=', organizationId), eb('organization_id', 'is', null)]))
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    if (heads.length === 0) return [];
    const rows = await this.db
      .selectFrom('integration_versions as v')
      .innerJoin('integrations as i', (join) =>
        join.onRef('v.integration_id', '=', 'i.id').onRef('v.version_number', '=', 'i.latest_version_number'),
      )
      .selectAll('v')
      .where(
        'i.id',
        'in',
        heads.map((head) => head.id),
      )
      .execute();
    const byIntegration = new Map(rows.map((row) => [row.integration_id, row]));
    return heads.flatMap((head) => {
      const row = byIntegration.get(head.id);
      return row ? [toIntegration(head, row)] : [];
    });
  }

  async findIntegration(id: string): Promise<IntegrationVersion | undefined> {
    const head = await this.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst();
    if (!head) return undefined;
    const row = await this.db
      .selectFrom('integration_versions')
      .selectAll()
      .where('integration_id', '=', id)
      .where('version_number', '=', head.latest_version_number)
      .executeTakeFirstOrThrow();
    return toIntegration(head, row);
  }

  async findIntegrationVersion(versionId: string): Promise<IntegrationVersion | undefined> {
    const row = await this.db
      .selectFrom('integration_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!row) return undefined;
    const head = await this.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', row.integration_id)
      .executeTakeFirstOrThrow();
    return toIntegration(head, row);
  }

  private async ownerOf(integrationId: string): Promise<string | null> {
    const head = await this.db
      .selectFrom('integrations')
      .select('organization_id')
      .where('id', '=', integrationId)
      .executeTakeFirstOrThrow();
    return head.organization_id;
  }

  async findAction(id: string): Promise<ActionVersion | undefined> {
    const head = await this.db.selectFrom('integration_actions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!head) return undefined;
    const row = await this.db
      .selectFrom('integration_action_versions')
      .selectAll()
      .where('action_id', '=', id)
      .where('version_number', '=', head.latest_version_number)
      .executeTakeFirstOrThrow();
    return toAction(head, await this.ownerOf(head.integration_id), row);
  }

  /** One action version by its id: what a connection and an integration-action node pin. */
  async findActionVersion(versionId: string): Promise<ActionVersion | undefined> {
    const row = await this.db
      .selectFrom('integration_action_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!row) return undefined;
    const head = await this.db
      .selectFrom('integration_actions')
      .selectAll()
      .where('id', '=', row.action_id)
      .executeTakeFirstOrThrow();
    return toAction(head, await this.ownerOf(head.integration_id), row);
  }

  async findCredential(id: string): Promise<CredentialVersion | undefined> {
    const head = await this.db.selectFrom('credential_templates').selectAll().where('id', '=', id).executeTakeFirst();
    if (!head) return undefined;
    const row = await this.db
      .selectFrom('credential_template_versions')
      .selectAll()
      .where('credential_id', '=', id)
      .where('version_number', '=', head.latest_version_number)
      .executeTakeFirstOrThrow();
    return toCredential(head, await this.ownerOf(head.integration_id), row);
  }

  /** One credential template version by its id: what a connection validates its credentialData against. */
  async findCredentialVersion(versionId: string): Promise<CredentialVersion | undefined> {
    const row = await this.db
      .selectFrom('credential_template_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirst();
    if (!row) return undefined;
    const head = await this.db
      .selectFrom('credential_templates')
      .selectAll()
      .where('id', '=', row.credential_id)
      .executeTakeFirstOrThrow();
    return toCredential(head, await this.ownerOf(head.integration_id), row);
  }

  /** The latest version of each action of an integration, in the order authored. */
  async latestActions(integration: Pick<IntegrationVersion, 'id' | 'organizationId'>): Promise<ActionVersion[]> {
    const rows = await this.db
      .selectFrom('integration_actions as a')
      .innerJoin('integration_action_versions as v', (join) =>
        join.onRef('v.action_id', '=', 'a.id').onRef('v.version_number', '=', 'a.latest_version_number'),
      )
      .selectAll('v')
      .select([
        'a.integration_id',
        'a.position',
        'a.latest_version_number',
        'a.created_at as head_created_at',
        'a.updated_at',
      ])
      .where('a.integration_id', '=', integration.id)
      .orderBy('a.position')
      .orderBy('a.created_at')
      .orderBy('v.name')
      .execute();
    return rows.map((r) =>
      toAction(
        {
          id: r.action_id,
          integration_id: r.integration_id,
          position: r.position,
          latest_version_number: r.latest_version_number,
          created_at: r.head_created_at,
          updated_at: r.updated_at,
        },
        integration.organizationId,
        r,
      ),
    );
  }

  /** The latest version of each credential template of an integration. */
  async latestCredentials(
    integration: Pick<IntegrationVersion, 'id' | 'organizationId'>,
  ): Promise<CredentialVersion[]> {
    const rows = await this.db
      .selectFrom('credential_templates as c')
      .innerJoin('credential_template_versions as v', (join) =>
        join.onRef('v.credential_id', '=', 'c.id').onRef('v.version_number', '=', 'c.latest_version_number'),
      )
      .selectAll('v')
      .select([
        'c.integration_id',
        'c.auth_type',
        'c.latest_version_number',
        'c.created_at as head_created_at',
        'c.updated_at',
      ])
      .where('c.integration_id', '=', integration.id)
      .orderBy('c.created_at')
      .orderBy('c.auth_type')
      .execute();
    return rows.map((r) =>
      toCredential(
        {
          id: r.credential_id,
          integration_id: r.integration_id,
          auth_type: r.auth_type,
          latest_version_number: r.latest_version_number,
          created_at: r.head_created_at,
          updated_at: r.updated_at,
        },
        integration.organizationId,
        r,
      ),
    );
  }
}
