import { readFileSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { NativeConnection, type NativeConnectionOptions } from '@temporalio/worker';
import type { Config } from '../config/config.js';

export interface TemporalHandle {
  connection: NativeConnection;
  client: Client;
  namespace: string;
  taskQueue: string;
  /** Base URL of the Temporal Web UI, for links to a run's page. */
  uiUrl?: string;
  /** Runs are tagged with our search attributes (they are registered in the namespace). */
  searchAttributes: boolean;
}

/**
 * One NativeConnection serves both the worker and the client, which lets
 * workflow starts use eager start (the first task runs without a poll).
 * TLS and an API key are for Temporal Cloud or any secured cluster.
 */
export async function connectTemporal(config: Config, address: string, uiUrl?: string): Promise<TemporalHandle> {
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
  const client = new Client({ connection, namespace: t.namespace });
  return {
    connection,
    client,
    namespace: t.namespace,
    taskQueue: t.taskQueue,
    uiUrl: t.uiUrl ?? uiUrl,
    searchAttributes: t.searchAttributes,
  };
}

/** Link to a workflow execution's page in the Temporal Web UI. */
export function temporalUiLink(
  handle: Pick<TemporalHandle, 'uiUrl' | 'namespace'>,
  workflowId: string,
  runId?: string,
): string | null {
  if (!handle.uiUrl) return null;
  const base = `${handle.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(handle.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return runId ? `${base}/${encodeURIComponent(runId)}/history` : base;
}
