import type { Outbound } from '../net/outbound.js';
import type { PythonRunRequest, PythonRunResult } from '../python/types.js';
import type { CatalogRepo } from '../store/catalog-repo.js';
import type { ConnectionRepo } from '../store/connection-repo.js';
import { NodeFailure } from '../domain/node-kinds/kind.js';
import { catalogOutputs } from '../domain/node-kinds/python-code.js';
import type { IntegrationActionRequest, NodeScope } from '../domain/node-kinds/services.js';
import type { CredentialVault } from './credential-vault.js';
import { redactValue, secretStrings } from './redact.js';
import { smokeTest } from './smoke-test.js';
import type { SmokeTestOutcome } from './types.js';

export interface ConnectionRuntimeDeps {
  connections: ConnectionRepo;
  catalog: CatalogRepo;
  vault: CredentialVault;
  outbound: Outbound;
  python: { run(request: PythonRunRequest): Promise<PythonRunResult> };
  smokeTestTimeoutMs: number;
}

const unusable = (what: string) => new NodeFailure(what, { kind: 'configuration', retryable: false });

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
    const { connections, catalog, vault } = this.deps;
    const connection = await connections.find(connectionId);
    if (!connection?.testActionVersionId) throw new Error(`Connection ${connectionId} has no smoke test`);
    const [action, credential] = await Promise.all([
      catalog.findActionVersion(connection.testActionVersionId),
      connections.findCredential(connection.credentialId),
    ]);
    if (!action || !credential) throw new Error(`Connection ${connectionId} lost its test action or credential`);
    const outcome = await smokeTest(this.deps.outbound, {
      action,
      credential,
      data: vault.open(credential),
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
   * connected, and the action must belong to the connection's integration.
   */
  async runAction(scope: NodeScope, request: IntegrationActionRequest): Promise<PythonRunResult> {
    const { connections, catalog, vault, python } = this.deps;
    const connection = await connections.find(request.connectionId);
    if (
      !connection ||
      connection.organizationId !== scope.organizationId ||
      connection.workspaceId !== scope.workspaceId
    ) {
      throw unusable(`Connection ${request.connectionId} does not exist in this case's workspace`);
    }
    if (connection.status !== 'connected')
      throw unusable(`Connection ${connection.id} is ${connection.status.replace('_', ' ')}`);
    const action = await catalog.findActionVersion(request.actionVersionId);
    if (
      !action ||
      (action.organizationId !== null && action.organizationId !== scope.organizationId) ||
      action.integrationId !== connection.integrationId
    ) {
      throw unusable(`Action version ${request.actionVersionId} is not an action of the connection's integration`);
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
    const data = vault.open(credential);
    const result = await python.run({
      form: 'script',
      source: action.code,
      inputs: request.inputs,
      credentialValue: data,
      declaredOutputs: catalogOutputs(action),
      network: true,
      timeoutMs: request.timeoutMs,
      organizationId: scope.organizationId,
    });
    return redactValue(result, secretStrings(data));
  }
}
