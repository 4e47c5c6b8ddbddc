import { hasGrant, requireOrganizationGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import { DomainError } from '../errors.js';
import type { Author, CatalogRepo } from '../store/catalog-repo.js';
import { IDEMPOTENCY_TTL_MS, idempotencyHashes } from '../idempotency/fingerprint.js';
import type {
  ActionContent,
  ActionVersion,
  CredentialContent,
  CredentialStatus,
  CredentialVersion,
  IntegrationContent,
  IntegrationCreation,
  IntegrationDetail,
  IntegrationDraft,
  IntegrationStatus,
  IntegrationVersion,
  Provider,
} from '../domain/catalog.js';

/** Runs the authoring scan on Python source; throws a 400 DomainError carrying the violations. */
export type CodeScanner = (source: string, field: string) => Promise<void>;

/** An integration creation request: the draft, and the Idempotency-Key with the raw body it fingerprints. */
export interface IntegrationRequest {
  draft: IntegrationDraft;
  idempotency?: { key: string; body: unknown };
}

export interface CreationOutcome {
  result: IntegrationCreation;
  /** true when an Idempotency-Key retry returned the first result. */
  replayed: boolean;
}

/** The contract's bound on an integration's actions, kept when actions are added later too. */
const MAX_ACTIONS = 50;

/** A concurrent update moved the latest version: how often an update re-reads its base before 409. */
const UPDATE_ATTEMPTS = 5;

async function withVersionRetries<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < UPDATE_ATTEMPTS; i++) {
    const done = await attempt();
    if (done !== undefined) return done;
  }
  throw DomainError.conflict('The catalog entry is being updated concurrently; retry');
}

/** Published integrations (organizationId null) are visible to every organization. */
function visibleTo(organizationId: string, owner: string | null): boolean {
  return owner === null || owner === organizationId;
}

/**
 * The integration catalog's rules: who may author and read, provider
 * ownership, the code scan, all-or-nothing creation with idempotent retries,
 * one credential per authType, versioned updates, and visibility (own
 * organization plus what the service published).
 */
export class CatalogService {
  constructor(
    private readonly repo: CatalogRepo,
    private readonly scanCode: CodeScanner,
  ) {}

  /** Authoring: organization-scoped key, Integration: Full, verified organization (403 before the body). */
  requireAuthor(auth: AuthContext): void {
    requireOrganizationGrant(auth, 'integration:full', { verified: true });
  }

  /** Browsing: Integration: Read with any key scope, so a workspace key can find what to connect. */
  requireReader(auth: AuthContext): void {
    if (!hasGrant(auth, 'integration:read')) throw DomainError.forbidden('This API key lacks Integration: Read');
  }

  createProvider(auth: AuthContext, name: string): Promise<Provider> {
    return this.repo.createProvider(auth.organizationId, auth.userId, name);
  }

  listProviders(auth: AuthContext): Promise<Provider[]> {
    return this.repo.listProviders(auth.organizationId);
  }

  /** Operator: the service's own providers. */
  publishedProviders(): Promise<Provider[]> {
    return this.repo.listProviders(null);
  }

  /** Operator: a provider of the service itself, for integrations every organization sees. */
  publishProvider(name: string): Promise<Provider> {
    return this.repo.createProvider(null, null, name);
  }

  async createIntegration(auth: AuthContext, request: IntegrationRequest): Promise<CreationOutcome> {
    const { draft, idempotency } = request;
    await this.requireProviderOf(auth.organizationId, draft.providerId);
    if (!idempotency)
      return { result: await this.createUnclaimed(auth.organizationId, auth.userId, draft), replayed: false };

    const hashes = idempotencyHashes(idempotency.key, idempotency.body);
    const notBefore = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
    const replay = () => this.replay(auth.organizationId, hashes, notBefore);
    const earlier = await replay();
    if (earlier) return earlier;
    await this.scanActions(draft);
    const created = await this.repo.createIntegration(auth.organizationId, auth.userId, draft, {
      organizationId: auth.organizationId,
      ...hashes,
      notBefore,
    });
    if (created !== 'key-taken') return { result: created, replayed: false };
    // A concurrent request with the same key committed first: answer as its retry would.
    const winner = await replay();
    if (!winner) throw DomainError.conflict('A request with this Idempotency-Key is in progress; retry');
    return winner;
  }

  /** Operator: an integration of the service itself, visible to and connectable by every organization. */
  async publishIntegration(draft: IntegrationDraft): Promise<IntegrationCreation> {
    await this.requireProviderOf(null, draft.providerId);
    return this.createUnclaimed(null, null, draft);
  }

  private async replay(
    organizationId: string,
    hashes: { keyHash: string; requestHash: string },
    notBefore: string,
  ): Promise<CreationOutcome | undefined> {
    const stored = await this.repo.findIdempotency(organizationId, hashes.keyHash, notBefore);
    if (!stored) return undefined;
    if (stored.requestHash !== hashes.requestHash) {
      throw DomainError.unprocessable('This Idempotency-Key was already used with a different request body');
    }
    return { result: stored.result, replayed: true };
  }

  private async requireProviderOf(owner: string | null, providerId: string): Promise<void> {
    const provider = await this.repo.findProvider(providerId);
    if (!provider) throw DomainError.unprocessable(`Provider ${providerId} does not exist`);
    if (provider.organizationId !== owner) throw DomainError.forbidden('The provider belongs to another organization');
  }

  /** Every action's code is scanned before anything is written, so a refused action leaves nothing behind. */
  private async scanActions(draft: IntegrationDraft): Promise<void> {
    for (const [index, action] of draft.actions.entries()) {
      if (action.code !== null) await this.scanCode(action.code, `integration.actions.${index}.code`);
    }
  }

  private async createUnclaimed(
    owner: string | null,
    author: Author,
    draft: IntegrationDraft,
  ): Promise<IntegrationCreation> {
    await this.scanActions(draft);
    return this.repo.createIntegration(owner, author, draft);
  }

  /** An integration version the key's organization owns: 404 unknown, 403 another organization's (or the service's). */
  async ownIntegrationVersion(auth: AuthContext, integrationVersionId: string): Promise<IntegrationVersion> {
    return this.owned(
      auth,
      await this.repo.findIntegrationVersion(integrationVersionId),
      `Integration version ${integrationVersionId}`,
    );
  }

  /** Adds an action to an integration the key's organization owns; its code is scanned first. */
  async addAction(auth: AuthContext, integration: IntegrationVersion, content: ActionContent): Promise<ActionVersion> {
    if (content.code !== null) await this.scanCode(content.code, 'action.code');
    const created = await this.repo.addAction(integration, auth.userId, content, MAX_ACTIONS);
    if (created === 'full') throw DomainError.badRequest(`An integration holds at most ${MAX_ACTIONS} actions`);
    return created;
  }

  async addCredential(
    auth: AuthContext,
    integration: IntegrationVersion,
    content: CredentialContent,
  ): Promise<CredentialVersion> {
    const created = await this.repo.addCredential(integration, auth.userId, content);
    if (!created)
      throw DomainError.conflict(`The integration already has a credential with authType ${content.authType}`);
    return created;
  }

  async updateIntegration(
    auth: AuthContext,
    integrationId: string,
    patch: Partial<IntegrationContent>,
  ): Promise<IntegrationVersion> {
    return withVersionRetries(async () => {
      const base = this.owned(auth, await this.repo.findIntegration(integrationId), `Integration ${integrationId}`);
      return this.repo.addIntegrationVersion(base, auth.userId, { ...base, ...patch });
    });
  }

  async updateAction(auth: AuthContext, actionId: string, patch: Partial<ActionContent>): Promise<ActionVersion> {
    let scanned: string | null = null;
    return withVersionRetries(async () => {
      const base = this.owned(auth, await this.repo.findAction(actionId), `Action ${actionId}`);
      const content: ActionContent = { ...base, ...patch };
      // Every version passes the scan under the current policy, a carried-over code included.
      if (content.code !== null && content.code !== scanned) {
        await this.scanCode(content.code, 'action.code');
        scanned = content.code;
      }
      return this.repo.addActionVersion(base, auth.userId, content);
    });
  }

  async updateCredential(
    auth: AuthContext,
    credentialId: string,
    patch: Partial<Omit<CredentialContent, 'authType'>>,
  ): Promise<CredentialVersion> {
    return withVersionRetries(async () => {
      const base = this.owned(auth, await this.repo.findCredential(credentialId), `Credential ${credentialId}`);
      return this.repo.addCredentialVersion(base, auth.userId, { ...base, ...patch });
    });
  }

  listIntegrations(auth: AuthContext, page: { limit: number; offset: number }): Promise<IntegrationVersion[]> {
    return this.repo.listIntegrations(auth.organizationId, page);
  }

  async integration(auth: AuthContext, integrationId: string): Promise<IntegrationDetail> {
    return this.detail(
      this.visible(auth, await this.repo.findIntegration(integrationId), `Integration ${integrationId}`),
    );
  }

  /**
   * The status in force of an integration and of a credential template: their
   * latest versions', whichever version a caller named (an author retires an
   * integration by cutting a version; earlier version ids stay readable).
   */
  async currentStatuses(
    integrationId: string,
    templateId: string | undefined,
  ): Promise<{ integration: IntegrationStatus | undefined; template: CredentialStatus | undefined }> {
    const [integration, template] = await Promise.all([
      this.repo.findIntegration(integrationId),
      templateId === undefined ? undefined : this.repo.findCredential(templateId),
    ]);
    return { integration: integration?.status, template: template?.status };
  }

  async integrationVersion(auth: AuthContext, integrationVersionId: string): Promise<IntegrationDetail> {
    return this.detail(
      this.visible(
        auth,
        await this.repo.findIntegrationVersion(integrationVersionId),
        `Integration version ${integrationVersionId}`,
      ),
    );
  }

  /** An action version visible to the key: what connections and integration-action nodes resolve. */
  async actionVersion(auth: AuthContext, actionVersionId: string): Promise<ActionVersion> {
    return this.visible(auth, await this.repo.findActionVersion(actionVersionId), `Action version ${actionVersionId}`);
  }

  /** A credential template version visible to the key: what a connection's credentialData is checked against. */
  async credentialVersion(auth: AuthContext, credentialVersionId: string): Promise<CredentialVersion> {
    return this.visible(
      auth,
      await this.repo.findCredentialVersion(credentialVersionId),
      `Credential version ${credentialVersionId}`,
    );
  }

  private async detail(integration: IntegrationVersion): Promise<IntegrationDetail> {
    const [actions, credentials] = await Promise.all([
      this.repo.latestActions(integration),
      this.repo.latestCredentials(integration),
    ]);
    return { integration, actions, credentials };
  }

  /** Another organization's private entry is as absent as an unknown one: its existence is not disclosed. */
  private visible<T extends { organizationId: string | null }>(
    auth: AuthContext,
    entry: T | undefined,
    what: string,
  ): T {
    if (!entry || !visibleTo(auth.organizationId, entry.organizationId))
      throw DomainError.notFound(`${what} does not exist`);
    return entry;
  }

  private owned<T extends { organizationId: string | null }>(auth: AuthContext, entry: T | undefined, what: string): T {
    if (!entry) throw DomainError.notFound(`${what} does not exist`);
    if (entry.organizationId !== auth.organizationId)
      throw DomainError.forbidden(`${what} belongs to another organization`);
    return entry;
  }
}
