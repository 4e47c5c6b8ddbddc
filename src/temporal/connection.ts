import { readFileSync } from 'node:fs';
import { Client, type ClientInterceptors } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config/config.js';
import { secretBoxFromConfig } from '../crypto/secret-box.js';
import { encryptingDataConverter } from './data-converter.js';
import { PayloadEncryption } from './payload-encryption.js';

export interface TemporalHandle {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI (operators: logs, the codec endpoint's CORS origin). */
  uiUrl?: string;
  /** The UI tenants are linked to: only one the operator says enforces access (temporal.tenantsMayUseUi). */
  tenantUiUrl?: string;
  /** Encrypts what the client and the worker hand Temporal (src/temporal/payload-encryption.ts). */
  codec: PayloadEncryption;
  /** Runs are tagged with our search attributes (they are registered in the namespace). */
  searchAttributes: boolean;
}

/**
 * One NativeConnection serves both the worker and the client, which lets
 * workflow starts use eager start (the first task runs without a poll).
 * TLS and an API key are for Temporal Cloud or any secured cluster.
 */
export async function connectTemporal(
  config: Config,
  address: string,
  uiUrl?: string,
  interceptors?: ClientInterceptors,
): Promise<TemporalHandle> {
  const t = config.temporal;
  const options: NativeConnectionOptions = { address };
  if (t.tls || t.tlsCertPath || t.apiKey) {
    options.tls = {
      serverNameOverride: t.tlsServerName,
      serverRootCACertificate: t.tlsCaPath ? readFileSync(t.tlsCaPath) : undefined,
      clientCertPair:
        t.tlsCertPath && t.tlsKeyPath
          ? { crt: readFileSync(t.tlsCertPath), key: readFileSync(t.tlsKeyPath) }
          : undefined,
    };
  }
  if (t.apiKey) options.apiKey = t.apiKey;
  const connection = await NativeConnection.connect(options);
  const codec = new PayloadEncryption(secretBoxFromConfig(config));
  const client = new Client({
    connection,
    namespace: t.namespace,
    dataConverter: encryptingDataConverter(codec),
    interceptors,
  });
  return {
    connection,
    client,
    namespace: t.namespace,
    taskQueue: t.taskQueue,
    uiUrl: t.uiUrl ?? uiUrl,
    // The embedded UI has no authentication: never handed to tenants.
    tenantUiUrl: t.tenantsMayUseUi ? t.uiUrl : undefined,
    codec,
    searchAttributes: t.searchAttributes,
  };
}

/** Link to a workflow execution's page in the Temporal Web UI, when tenants may use it (null otherwise). */
export function temporalUiLink(
  handle: Pick<TemporalHandle, 'tenantUiUrl' | 'namespace'>,
  workflowId: string,
  runId?: string,
): string | null {
  if (!handle.tenantUiUrl) return null;
  const base = `${handle.tenantUiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(handle.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
