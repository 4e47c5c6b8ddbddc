import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { paths } from '../../src/client/index.js';
import { answered, type TestService } from '../support/harness.js';
import { decodedHistoryText } from '../support/history.js';
import { clientFor } from '../support/keys.js';
import {
  action,
  credential,
  integration as integrationBody,
  pngIcon,
  type ActionInput,
  type CredentialInput,
  type IntegrationInput,
} from '../catalog/support.js';

export { expectError, expectRefused, failedFields } from '../code/support.js';

/** One request a local endpoint received. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface LocalServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback (the harness's outbound policy allows 127.0.0.0/8). */
export async function localServer(handle: (req: Received, res: ServerResponse) => void): Promise<LocalServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      handle(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Integration {
  id: string;
  versionId: string;
  actionVersionId: string;
  credentialVersionId: string;
}

/** An integration with one action (at `endpoint`, running `code`) and one credential template, authored with `key`. */
export async function authorIntegration(
  svc: TestService,
  key: string,
  options: {
    name?: string;
    endpoint?: string;
    code?: string;
    authType?: CredentialInput['authType'];
    inputs?: CredentialInput['inputs'];
    status?: IntegrationInput['status'];
    credentialStatus?: CredentialInput['status'];
    outputs?: ActionInput['outputs'];
  } = {},
): Promise<Integration> {
  const client = clientFor(svc, key);
  const provider = await answered(client.POST('/api/v1/provider', { body: { name: 'Acme' } }), 201);
  const body = integrationBody(provider.id, {
    ...(options.name ? { name: options.name } : {}),
    ...(options.status ? { status: options.status } : {}),
    actions: [
      action({
        endpoint: options.endpoint ?? 'http://127.0.0.1:9/unused',
        ...(options.code ? { code: options.code } : {}),
        ...(options.outputs ? { outputs: options.outputs } : {}),
      }),
    ],
    credential: credential({
      icon: pngIcon,
      authType: options.authType ?? 'api_key',
      ...(options.inputs ? { inputs: options.inputs } : {}),
      ...(options.credentialStatus ? { status: options.credentialStatus } : {}),
    }),
  });
  const c = await answered(client.POST('/api/v1/integration', { body: { integration: body } }), 201);
  return {
    id: c.id,
    versionId: c.versionId,
    actionVersionId: c.createdActions[0]?.actionVersionId ?? '',
    credentialVersionId: c.createdCredential?.credentialVersionId ?? '',
  };
}

/** A connection as a connect sends it. */
export type ConnectionInput =
  paths['/api/v1/integration/connect']['post']['requestBody']['content']['application/json']['connection'];

export function connection(
  integration: Integration,
  workspaceId: string,
  overrides: Partial<ConnectionInput> = {},
): ConnectionInput {
  return {
    name: 'My connection',
    workspaceId,
    integrationVersionId: integration.versionId,
    actionVersionId: integration.actionVersionId,
    credentialVersionId: integration.credentialVersionId,
    credentialData: { api_key: 'sk-live-0123456789abcdef' },
    ...overrides,
  };
}

/** The typed connect call, as `key` (the service's own by default); wrap it in answered/expectRefused. */
export function connect(svc: TestService, body: ConnectionInput, key = svc.key) {
  return clientFor(svc, key).POST('/api/v1/integration/connect', { body: { connection: body } });
}

/**
 * A workflow's whole history as searchable text, every payload decrypted as the service reads it
 * (test/support/history.ts). Read once the workflow has closed: what the store shows (a case's end, a run's record)
 * is written by an activity before the workflow task that records its result, and ends the workflow, completes.
 */
export async function historyText(svc: TestService, workflowId: string): Promise<string> {
  const { client, codec } = svc.service.context.temporal;
  const handle = client.workflow.getHandle(workflowId);
  // Closed however it ended: a failed or cancelled run's history is read as well.
  await handle.result().catch(() => undefined);
  return decodedHistoryText(await handle.fetchHistory(), codec);
}
