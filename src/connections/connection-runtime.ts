import type { Outbound } from '../net/outbound.js';
import type { PythonRunRequest, PythonRunResult } from '../python/types.js';
import type { CatalogRepo } from '../store/catalog-repo.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import { NodeFailure } from '../domain/node-kinds/kind.js';
import { catalogOutputs } from '../domain/node-kinds/python-code.js';
import type { IntegrationActionRequest, NodeScope } from '../domain/node-kinds/services.js';
import type { CredentialData } from './credential-data.js';
import type { CredentialVault } from './credential-vault.js';
import { isEnabledAction, notEnabledMessage } from './enabled-action.js';
import { actionCredentialValue } from './oauth-credential.js';
import { OAuthNeedsReauthorization, OAuthRefreshUnavailable } from './oauth-temporal.js';
import type { OAuthTokens } from './oauth-tokens.js';
import { redactValue, secretStrings } from './redact.js';
import { smokeTest } from './smoke-test.js';
import type { Tracing } from '../tracing/tracing.js';
import type { SmokeTestOutcome } from '../domain/connections.js';
import type { Connection, StoredCredential } from '../domain/connections.js';

export interface ConnectionRuntimeDeps {
  connections: ConnectionRepo;
  catalog: CatalogRepo;
  vault: CredentialVault;
  oauthTokens: OAuthTokens;
  outbound: Outbound;
  python: { run(request: PythonRunRequest): Promise<PythonRunResult> };
  smokeTestTimeoutMs: number;
  /** The activity's trace context for the action's HTTP calls (src/tracing); none when tracing is off. */
  withTraceContext: Tracing['withTraceContext'];
}

const unusable = (what: string) => new NodeFailure(what, { kind: 'configuration', retryable: false });

const reauthorize = (connectionId: string, why: string) =>
  unusable(
    `Connection ${connectionId} needs re-authorization (${why}): re-authorize it with POST /api/v1/connection/${connectionId}/reauthorize`,
  );

/** Why a connection that is not `connected` cannot run an action, in words a person can act on. */
function notConnected(connection: Connection): NodeFailure {
  switch (connection.status) {
    case 'needs_reauthorization':
      return reauthorize(connection.id, 'the provider refused its refresh token');
    case 'pending_authorization':
      return unusable(`Connection ${connection.id} is pending authorization: nobody has authorized it yet`);
    default:
      return unusable(`Connection ${connection.id} is ${connection.status}`);
  }
}

/**
 * What runs inside activities: the only place a credential is decrypted.
 * Temporal carries connection and action ids only; the plaintext lives in
 * this process's memory for one call and every value that leaves (results,
 * logs, errors) has the credential's values redacted.
 */
export class ConnectionRuntime {
  constructor(private readonly deps: ConnectionRuntimeDeps) {}

  /** The smoke test of a new connection; records and returns the outcome. */
  async smokeTest(connectionId: string, testInputData: Record<string, unknown> | undefined): Promise<SmokeTestOutcome> {
    const { connections, catalog } = this.deps;
    const connection = await connections.find(connectionId);
    if (!connection?.testActionVersionId) throw new Error(`Connection ${connectionId} has no smoke test`);
    const [action, credential] = await Promise.all([
      catalog.findActionVersion(connection.testActionVersionId),
      connections.findCredential(connection.credentialId),
    ]);
    if (!action || !credential) throw new Error(`Connection ${connectionId} lost its test action or credential`);
    let data: CredentialData;
    try {
      data = await this.credentialData(credential);
    } catch (err) {
      const outcome = {
        testPassed: false,
        testError: `No usable OAuth access token: ${err instanceof Error ? err.message : String(err)}`,
      };
      await connections.recordTest(connectionId, outcome);
      return outcome;
    }
    const outcome = await smokeTest(this.deps.outbound, {
      action,
      credential,
      data,
      testInputData,
      timeoutMs: this.deps.smokeTestTimeoutMs,
    });
    await connections.recordTest(connectionId, outcome);
    return outcome;
  }

  /**
   * An integration action for a node of a case. The connection must be of
   * the case's own organization and workspace (a workflow naming another
   * tenant's connection fails here even if it got past the save check), be
   * connected, and the action must be the one enabled on the connection.
   */
  async runAction(scope: NodeScope, request: IntegrationActionRequest): Promise<PythonRunResult> {
    const { connections, catalog, python } = this.deps;
    const connection = await connections.find(request.connectionId);
    if (
      !connection ||
      connection.organizationId !== scope.organizationId ||
      connection.workspaceId !== scope.workspaceId
    ) {
      throw unusable(`Connection ${request.connectionId} does not exist in this case's workspace`);
    }
    if (connection.status !== 'connected') throw notConnected(connection);
    const action = await catalog.findActionVersion(request.actionVersionId);
    if (
      !action ||
      (action.organizationId !== null && action.organizationId !== scope.organizationId) ||
      !(await isEnabledAction((id) => catalog.findActionVersion(id), connection, action))
    ) {
      throw unusable(notEnabledMessage(request.actionVersionId, connection.id));
    }
    if (action.code === null) throw unusable(`Action version ${action.versionId} has no code to run`);
    const credential = await connections.findCredential(connection.credentialId);
    if (
      !credential ||
      credential.organizationId !== scope.organizationId ||
      credential.workspaceId !== scope.workspaceId
    ) {
      throw unusable(`Connection ${connection.id} has no credential in this workspace`);
    }
    let data: CredentialData;
    try {
      data = await this.credentialData(credential);
    } catch (err) {
      if (err instanceof OAuthNeedsReauthorization) throw reauthorize(connection.id, err.message);
      if (err instanceof OAuthRefreshUnavailable)
        throw new NodeFailure(`Connection ${connection.id} has no valid access token right now: ${err.message}`, {
          kind: 'action',
          retryable: true,
        });
      throw err;
    }
    const result = await python.run({
      form: 'script',
      source: action.code,
      inputs: request.inputs,
      // OAuth: the access token, never what mints new ones (client secret, refresh token).
      credentialValue: credential.authType === 'oauth' ? actionCredentialValue(data) : data,
      declaredOutputs: catalogOutputs(action),
      network: true,
      // The activity's span: the API the action calls continues the case's trace (nothing when tracing is off).
      traceContext: this.deps.withTraceContext(undefined),
      timeoutMs: request.timeoutMs,
      organizationId: scope.organizationId,
      deadline: request.deadline,
      signal: request.signal,
    });
    return redactValue(result, secretStrings(data));
  }

  /** The decrypted credential; for OAuth with an access token that is valid now (refreshed through the workflow if not). */
  private credentialData(credential: StoredCredential): Promise<CredentialData> {
    return credential.authType === 'oauth'
      ? this.deps.oauthTokens.forAction(credential)
      : Promise.resolve(this.deps.vault.open(credential));
  }
}
