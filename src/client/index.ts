import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

/** The typed caseflow API client: paths, parameters, bodies and responses checked against the OpenAPI document. */
export type CaseflowClient = Client<paths>;

export interface CaseflowClientOptions {
  /** Where the service listens, such as http://127.0.0.1:8080. */
  baseUrl: string;
  /** The API key, sent as x-service-key on every request. */
  key?: string;
  /** Further headers on every request. */
  headers?: Record<string, string>;
}

export function createClient(options: CaseflowClientOptions): CaseflowClient {
  return createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, ...(options.key ? { 'x-service-key': options.key } : {}) },
  });
}
