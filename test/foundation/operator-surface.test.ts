import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { adminToken, refused, startTestService, type TestService } from '../support/harness.js';

describe('operator surface: admin gate before the body, generic readiness errors', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ config: { bodyLimit: '64kb' } });
  });
  afterAll(async () => {
    await svc.stop().catch(() => undefined);
  });

  it('refuses an unauthenticated 10 MB admin body with 401 before parsing it', async () => {
    // Malformed and far over the body limit: a parser running first would answer 400 or 413.
    const rawBody = `{"name": "${'x'.repeat(10 * 1024 * 1024)}`;
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abcdef']) {
      const res = await svc.request('POST', '/admin/organizations', {
        rawBody,
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        key: null,
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ statusCode: 401 });
    }
    const allowed = await svc.request('POST', '/admin/organizations', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      key: null,
    });
    expect(allowed.body).toMatchObject({ statusCode: 400, errorCode: 'MALFORMED_JSON' });
  });

  it('answers readiness failures with generic text, never the raw error', async () => {
    await svc.service.context.store.db.destroy();
    const res = await refused(createClient({ baseUrl: svc.url }).GET('/readyz'), 503);
    expect(res).toMatchObject({
      status: 'not_ready',
      checks: { store: { ok: false, error: 'store unavailable' }, temporal: { ok: true } },
    });
    expect(JSON.stringify(res)).not.toMatch(/destroy|driver|sqlite|\//i);
  });
});
