import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { answered, startTestService, type TestService } from '../support/harness.js';

describe('service basics over HTTP', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { bodyLimit: '64kb' } });
  });
  afterAll(async () => {
    await svc.stop();
  });

  it('answers liveness and readiness with the store and Temporal up', async () => {
    const anonymous = createClient({ baseUrl: svc.url });
    expect(await answered(anonymous.GET('/healthz'), 200)).toEqual({ status: 'ok' });
    const ready = await answered(anonymous.GET('/readyz'), 200);
    expect(ready).toMatchObject({ status: 'ready', checks: { store: { ok: true }, temporal: { ok: true } } });
  });

  it('answers unknown routes with 404 in the error shape', async () => {
    // Raw: a route the document does not have.
    const res = await svc.request('GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, errorCode: 'NOT_FOUND', path: '/api/v1/nothing-here' });
    expect(Date.parse(String(res.body.timestamp))).not.toBeNaN();
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('rejects malformed JSON with 400 and oversized bodies with 413, without stack traces', async () => {
    const bad = await svc.admin('POST', '/admin/organizations', undefined);
    expect(bad.status).toBe(400);
    const malformed = await svc.request('POST', '/admin/organizations', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json', authorization: 'Bearer test-admin-token-0123456789' },
      key: null,
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ statusCode: 400, errorCode: 'MALFORMED_JSON' });
    const big = await svc.request('POST', '/admin/organizations', {
      body: { name: 'x'.repeat(100 * 1024) },
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      key: null,
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ statusCode: 413, errorCode: 'PAYLOAD_TOO_LARGE' });
    expect(big.text).not.toMatch(/at .*\.js:\d+/);
  });

  it('validates bodies with field errors in metadata', async () => {
    const res = await svc.admin('POST', '/admin/users', { email: 'not-an-email', name: '' });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('VALIDATION_ERROR');
    const fields = (res.body.metadata as { fields: Array<{ field: string }> }).fields.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['body.email', 'body.name']));
  });

  it('serves Prometheus metrics with request counts by route and status', async () => {
    await answered(createClient({ baseUrl: svc.url }).GET('/healthz'), 200);
    // /metrics, /openapi.json and /docs/ are not routes of the document: raw requests.
    const res = await svc.request('GET', '/metrics', { key: null });
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/caseflow_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(res.text).toContain('caseflow_http_request_duration_seconds_bucket');
    expect(res.text).toContain('process_cpu_user_seconds_total');
  });

  it('serves an OpenAPI 3.1 document and a docs page', async () => {
    const doc = await svc.request('GET', '/openapi.json', { key: null });
    expect(doc.body.openapi).toBe('3.1.0');
    const paths = doc.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    expect(paths['/admin/keys/{keyId}/revoke']?.post?.responses).toHaveProperty('204');
    expect(paths['/readyz']?.get).toBeDefined();
    // The contract's typeDefinition limit is in the document, not only in the validation.
    const schemas = (doc.body.components as { schemas: Record<string, { properties?: Record<string, unknown> }> })
      .schemas;
    const allowedTypes = schemas.CatalogFieldInput?.properties?.allowedTypes as { items: Record<string, unknown> };
    expect(JSON.stringify(allowedTypes.items)).toContain('"typeDefinition":{"maxProperties":50');
    const page = await svc.request('GET', '/docs/', { key: null });
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger');
  });
});
