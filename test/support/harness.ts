import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config/config.js';
import { createLogger, type Logger } from '../../src/logging/logger.js';
import { startService, type Role, type RunningService } from '../../src/service.js';
import type { BootstrapResult } from '../../src/tenancy/tenancy-service.js';
import type { TracingSettings } from '../../src/tracing/settings.js';
import { createClient, type CaseflowClient } from '../../src/client/index.js';

export const adminToken = 'test-admin-token-0123456789';

/**
 * A rate-limit window (generation.rateLimitWindowMs, callbacks.redeliverWindowMs) that no test run
 * crosses. Fixed windows start at multiples of their length since the epoch, so a minute's ends at the
 * top of every minute, and a test counting up to a limit across that instant sees the count start
 * again (a 404 where it expected the 429). This one ends in December 2069.
 */
export const unendingRateWindowMs = 100 * 365 * 24 * 3_600_000;

export interface TestServiceOptions {
  role?: Role;
  /** Reuse a data directory (restart tests); a fresh temporary one otherwise. */
  dataDir?: string;
  /** Share a task queue between services (restart tests); a fresh one otherwise. */
  taskQueue?: string;
  databaseUrl?: string;
  config?: Record<string, unknown>;
  /** A dedicated Temporal server (fault tests that stop it); the shared dev server otherwise. */
  temporalAddress?: string;
  /** The service starts and supervises its own Temporal dev server, as `npm start` does. */
  embeddedTemporal?: boolean;
  /** Where the service logs (tests that search the logs); the TEST_LOG_LEVEL logger otherwise. */
  logger?: Logger;
  /** Where spans go (test/tracing); read from the OTEL_* environment variables otherwise. */
  tracing?: TracingSettings;
  /** The key requests and the typed client send when this start makes none (a restart over an earlier start's data). */
  key?: string;
}

export interface TestService {
  url: string;
  dataDir: string;
  taskQueue: string;
  config: Config;
  service: RunningService;
  /** The default organization's full-access key, when this start created it. */
  bootstrap?: BootstrapResult;
  key: string;
  organizationId: string;
  workspaceId: string;
  userId: string;
  request(method: string, urlPath: string, options?: RequestOptions): Promise<TestResponse>;
  /** The typed client (src/client) with the default organization's full-access key. */
  client: CaseflowClient;
  admin(method: string, urlPath: string, body?: unknown): Promise<TestResponse>;
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body sent as is (with its own content type header). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** API key to send; defaults to the service's full-access key; null sends none. */
  key?: string | null;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed JSON body ({} when none); tests narrow it with a cast to the documented shape. */
  body: Record<string, unknown>;
  text: string;
}

export async function http(
  url: string,
  method: string,
  options: RequestOptions & { defaultKey?: string } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  const key = options.key === undefined ? options.defaultKey : options.key;
  if (key) headers['x-service-key'] = key;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  let parsed: TestResponse['body'];
  try {
    parsed = text ? (JSON.parse(text) as TestResponse['body']) : {};
  } catch {
    parsed = {};
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** What a typed client call resolves to (openapi-fetch): `data` on success, `error` on a refusal. */
export interface Reply {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The success body of a call: never when its operation answers success without one (a 202 or 204 with no content). */
export type SuccessBody<R> = Exclude<R extends { data?: infer D } ? D : never, undefined>;

/** answered() returns a body, answeredEmpty() checks there is none: each refuses, as a compile error, the other's call. */
export type StatusWithBody<R> = [SuccessBody<R>] extends [never]
  ? 'answers without a body: use answeredEmpty()'
  : number;
export type StatusWithoutBody<R> = [SuccessBody<R>] extends [never] ? number : 'answers with a body: use answered()';

/**
 * The body of a typed client call that answered `status`; fails the test with
 * the error body otherwise.
 */
export async function answered<R extends Reply>(call: Promise<R>, status: StatusWithBody<R>): Promise<SuccessBody<R>> {
  const { data, error, response } = await call;
  expect(response.status, JSON.stringify(error)).toBe(status);
  if (data === undefined) throw new Error(`${response.url} answered ${response.status} without a body`);
  return data as SuccessBody<R>;
}

/** A typed client call of an operation that answers success without a body (202, 204) answered `status`. */
export async function answeredEmpty<R extends Reply>(call: Promise<R>, status: StatusWithoutBody<R>): Promise<void> {
  const { data, error, response } = await call;
  expect(response.status, JSON.stringify(error)).toBe(status);
  expect(data).toBeUndefined();
}

/**
 * The error body of a typed client call that answered `status` (a refusal the
 * contract documents); fails the test with the body otherwise.
 */
export async function refused<E>(
  call: Promise<{ data?: unknown; error?: E; response: Response }>,
  status: number,
): Promise<E> {
  const { data, error, response } = await call;
  expect(response.status, JSON.stringify(data ?? error)).toBe(status);
  if (error === undefined) throw new Error(`${response.url} answered ${response.status} without a body`);
  return error;
}

/**
 * The real service in this process: API on a free port, a worker on its own
 * task queue, against the run's Temporal dev server and a SQLite file in a
 * temporary data directory (or Postgres when databaseUrl says so).
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = options.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'caseflow-test-'));
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const config = loadConfig(
    {},
    {
      dataDir,
      host: '127.0.0.1',
      port: 0,
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      adminToken,
      ...(options.databaseUrl ? { databaseUrl: options.databaseUrl } : {}),
      // Tests' receivers listen on loopback; tests of the outbound policy override this.
      outbound: { allowCidrs: '127.0.0.0/8' },
      ...(options.config ?? {}),
      temporal: {
        ...(options.config?.temporal ?? {}),
        address: options.embeddedTemporal ? undefined : (options.temporalAddress ?? inject('temporalAddress')),
        taskQueue,
        workerMetricsPort: 0,
      },
    },
  );
  let bootstrap: BootstrapResult | undefined;
  const service = await startService({
    config,
    logger: options.logger ?? createLogger(config.logLevel),
    role: options.role ?? 'all',
    ...('tracing' in options ? { tracing: options.tracing } : {}),
    onBootstrap: (result) => {
      bootstrap = result;
    },
  });
  const url = service.url ?? '';
  const key = bootstrap?.key.key ?? options.key;
  const admin = (method: string, urlPath: string, body?: unknown) =>
    http(url + urlPath, method, { body, key: null, headers: { authorization: `Bearer ${adminToken}` } });
  return {
    url,
    dataDir,
    taskQueue,
    config,
    service,
    bootstrap,
    key: key ?? '',
    organizationId: bootstrap?.organization.id ?? '',
    workspaceId: bootstrap?.workspace.id ?? '',
    userId: bootstrap?.user.id ?? '',
    request: (method, urlPath, requestOptions = {}) =>
      http(url + urlPath, method, { ...requestOptions, defaultKey: key }),
    client: createClient({ baseUrl: url, key }),
    admin,
    stop: async ({ keepData = false } = {}) => {
      await service.stop();
      if (!keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
