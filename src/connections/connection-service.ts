import { randomUUID } from 'node:crypto';
import { assertWorkspaceGrant } from '../auth/access.js';
import type { AuthContext } from '../domain/auth-context.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type {
  ActionVersion,
  AuthType,
  CredentialStatus,
  CredentialVersion,
  IntegrationStatus,
  IntegrationVersion,
} from '../domain/catalog.js';
import { DomainError } from '../errors.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import type { TenancyRepo, Workspace } from '../store/tenancy-repo.js';
import { checkCredentialData, type CredentialData } from './credential-data.js';
import type { CredentialVault } from './credential-vault.js';
import type { AuthorizationStart, OAuthFlow } from './oauth-flow.js';
import type { SmokeTestOutcome } from '../domain/connections.js';
import type { Connection, NewCredential, StoredCredential } from '../domain/connections.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Runs a connection's smoke test (a Temporal activity) and records it; never throws for the endpoint's failures. */
export type SmokeTestRunner = (
  connectionId: string,
  testInputData: Record<string, unknown> | undefined,
) => Promise<SmokeTestOutcome>;

/** A connect request after the body passed its schema. */
export interface ConnectRequest {
  name: string;
  description?: string;
  integrationVersionId: string;
  actionVersionId: string;
  credentialVersionId?: string;
  credentialData?: CredentialData;
  activeCredentialId?: string;
  testActionVersionId?: string;
  testInputData?: Record<string, unknown>;
}

export interface ConnectOutcome {
  connection: Connection;
  testPassed: boolean | null;
  testError: string | null;
  /** OAuth: where to send the person, and the 10-minute token to check the outcome with. */
  authorization: AuthorizationStart | null;
}

export interface ConnectionServiceDeps {
  repo: ConnectionRepo;
  catalog: CatalogService;
  tenancy: TenancyRepo;
  vault: CredentialVault;
  oauth: OAuthFlow;
  runSmokeTest: SmokeTestRunner;
}

/** What the ids of a connect request name, all resolved before anything is checked or written. */
interface Resolved {
  integration: IntegrationVersion;
  action: ActionVersion;
  template: CredentialVersion | undefined;
  testAction: ActionVersion | undefined;
  reused: StoredCredential | undefined;
  /** The integration's and the template's statuses in force (their latest versions'). */
  current: { integration: IntegrationStatus | undefined; template: CredentialStatus | undefined };
}

/**
 * Integrations in these states take no new connections: not yet or no longer
 * offered, or being retired (`deprecated`: the connections it has keep
 * running and can be re-authorized, new ones are refused).
 */
const unconnectable = new Set<IntegrationStatus>(['inactive', 'soon', 'deprecated']);

/**
 * Connections: a workspace connects a visible integration with a secret
 * credential (checked against the template, sealed at rest), optionally
 * smoke-tested; lists, reads and revokes them.
 */
export class ConnectionService {
  constructor(private readonly deps: ConnectionServiceDeps) {}

  /**
   * The contract checks the permission on workspaceId before the body, so a
   * value that is not a UUID, an unknown workspace and another
   * organization's all answer 403 alike.
   */
  async requireConnectWorkspace(auth: AuthContext, workspaceId: unknown): Promise<Workspace> {
    const workspace =
      typeof workspaceId === 'string' && UUID.test(workspaceId)
        ? await this.deps.tenancy.findWorkspace(workspaceId)
        : undefined;
    if (!workspace) throw DomainError.forbidden('This API key has no access to the workspace');
    assertWorkspaceGrant(auth, workspace, 'integration:full');
    return workspace;
  }

  async connect(auth: AuthContext, workspace: Workspace, request: ConnectRequest): Promise<ConnectOutcome> {
    const resolved = await this.resolve(auth, workspace, request);
    const { authType, credential } = this.credentialFor(auth, workspace, request, resolved);
    // A reused OAuth credential that was authorized before is live at once; otherwise a person authorizes.
    const pending = authType === 'oauth' && !(resolved.reused && resolved.reused.tokenGeneration > 0);
    const connection = await this.deps.repo.create(
      {
        organizationId: auth.organizationId,
        workspaceId: workspace.id,
        name: request.name,
        description: request.description ?? null,
        integrationId: resolved.integration.id,
        integrationVersionId: resolved.integration.versionId,
        actionVersionId: resolved.action.versionId,
        status: pending ? 'pending_authorization' : 'connected',
        testActionVersionId: resolved.testAction?.versionId ?? null,
        createdBy: auth.userId,
      },
      credential,
      auth.userId,
    );
    // OAuth has no token to test with until a person authorizes: the redirect runs the test then.
    if (pending)
      return { connection, testPassed: null, testError: null, authorization: await this.authorize(connection) };
    if (!resolved.testAction) return { connection, testPassed: null, testError: null, authorization: null };
    const outcome = await this.deps.runSmokeTest(connection.id, request.testInputData);
    return { connection: { ...connection, ...outcome }, ...outcome, authorization: null };
  }

  /**
   * A new authorization of an OAuth connection, in place (after the provider
   * refused its refresh token, to change scopes, or when a first attempt
   * expired): the same connection and credential, new tokens on success.
   */
  async reauthorize(auth: AuthContext, connectionId: string): Promise<ConnectOutcome> {
    const connection = await this.get(auth, connectionId, 'integration:full');
    if (connection.status === 'revoked')
      throw DomainError.unprocessable(`Connection ${connection.id} is revoked; connect again instead`);
    return {
      connection,
      testPassed: connection.testPassed,
      testError: connection.testError,
      authorization: await this.authorize(connection),
    };
  }

  private async authorize(connection: Connection): Promise<AuthorizationStart> {
    const credential = await this.deps.repo.findCredential(connection.credentialId);
    if (credential?.authType !== 'oauth')
      throw DomainError.unprocessable(`Connection ${connection.id} does not use an OAuth credential`);
    return this.deps.oauth.begin(connection, credential);
  }

  /** Every named id, 404 when it does not exist or is not visible: nothing is written before all resolve. */
  private async resolve(auth: AuthContext, workspace: Workspace, request: ConnectRequest): Promise<Resolved> {
    const { catalog } = this.deps;
    const integration = (await catalog.integrationVersion(auth, request.integrationVersionId)).integration;
    const action = await catalog.actionVersion(auth, request.actionVersionId);
    const template =
      request.credentialVersionId === undefined
        ? undefined
        : await catalog.credentialVersion(auth, request.credentialVersionId);
    const testAction =
      request.testActionVersionId === undefined
        ? undefined
        : await catalog.actionVersion(auth, request.testActionVersionId);
    let reused: StoredCredential | undefined;
    if (request.activeCredentialId !== undefined) {
      reused = await this.deps.repo.findCredential(request.activeCredentialId);
      // Another workspace's or organization's credential is as absent as an unknown one.
      if (reused?.organizationId !== auth.organizationId || reused.workspaceId !== workspace.id) {
        throw DomainError.notFound(`Credential ${request.activeCredentialId} does not exist`);
      }
    }
    const current = await catalog.currentStatuses(integration.id, template?.id);
    return { integration, action, template, testAction, reused, current };
  }

  /** The rules between the resolved entries (422), then the credential to store or reuse. */
  private credentialFor(
    auth: AuthContext,
    workspace: Workspace,
    request: ConnectRequest,
    { integration, action, template, testAction, reused, current }: Resolved,
  ): { authType: AuthType; credential: { reuse: string } | { id: string; create: NewCredential } } {
    if (current.integration === undefined || unconnectable.has(current.integration))
      throw DomainError.unprocessable(
        `Integration ${integration.id} is ${current.integration ?? 'gone'} and cannot be connected`,
      );
    for (const [field, entry] of [
      ['actionVersionId', action],
      ['testActionVersionId', testAction],
      ['credentialVersionId', template],
    ] as const) {
      if (entry && entry.integrationId !== integration.id)
        throw DomainError.unprocessable(`connection.${field} is not part of integration ${integration.id}`);
    }
    if (template && current.template !== 'active')
      throw DomainError.unprocessable(`Credential template ${template.id} is inactive`);
    if (reused) {
      if (reused.integrationId !== integration.id)
        throw DomainError.unprocessable(`Credential ${reused.id} belongs to another integration`);
      if (template && template.id !== reused.templateId)
        throw DomainError.unprocessable(`Credential ${reused.id} was made from another credential template`);
      return { authType: reused.authType, credential: { reuse: reused.id } };
    }
    // The schema guarantees credentialVersionId without activeCredentialId, hence a template here.
    if (!template) throw DomainError.badRequest('connection.credentialVersionId is required');
    const data = checkCredentialData(template, request.credentialData);
    const id = randomUUID();
    const owner = { id, organizationId: auth.organizationId, workspaceId: workspace.id };
    return {
      authType: template.authType,
      credential: {
        id,
        create: {
          ...owner,
          integrationId: integration.id,
          templateId: template.id,
          templateVersionId: template.versionId,
          authType: template.authType,
          dataCiphertext: this.deps.vault.seal(owner, data),
        },
      },
    };
  }

  async list(auth: AuthContext, workspaceId: string, page: { limit: number; offset: number }): Promise<Connection[]> {
    const workspace = await this.deps.tenancy.findWorkspace(workspaceId);
    if (!workspace) throw DomainError.notFound(`Workspace ${workspaceId} does not exist`);
    assertWorkspaceGrant(auth, workspace, 'integration:read');
    return this.deps.repo.list(auth.organizationId, workspaceId, page);
  }

  /** A connection of a workspace the key reaches with the grant: 404 unknown, 403 otherwise. */
  async get(
    auth: AuthContext,
    connectionId: string,
    grant: 'integration:read' | 'integration:full' = 'integration:read',
  ): Promise<Connection> {
    const connection = await this.deps.repo.find(connectionId);
    if (!connection) throw DomainError.notFound(`Connection ${connectionId} does not exist`);
    assertWorkspaceGrant(auth, { id: connection.workspaceId, organizationId: connection.organizationId }, grant);
    return connection;
  }

  /** Stops the connection for good: integration_action nodes naming it fail from the next run on. */
  async revoke(auth: AuthContext, connectionId: string): Promise<Connection> {
    const connection = await this.get(auth, connectionId, 'integration:full');
    await this.deps.repo.revoke(connection.id);
    return (await this.deps.repo.find(connection.id)) ?? connection;
  }
}
