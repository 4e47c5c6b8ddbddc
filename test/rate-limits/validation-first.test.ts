import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, unendingRateWindowMs, type TestResponse, type TestService } from '../support/harness.js';
import { newKey } from '../support/keys.js';
import { expectError, failedFields } from '../code/support.js';

const limit = 3;

describe('generation endpoints validate before they count (issue 26, item 3)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({
      config: { generation: { rateLimitMax: limit, rateLimitWindowMs: unendingRateWindowMs } },
    });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const key = () => newKey(svc, ['workflow:full', 'code:full']).then((k) => k.key);
  /** A well-formed request (404: no such workflow), which counts against the generation quota. */
  const valid = (k: string) => svc.request('GET', `/api/v1/workflow/${randomUUID()}/run`, { key: k });
  /** Missing its x-workspace-id header. */
  const headerless = (k: string) => svc.request('POST', '/api/v1/workflow/generate', { key: k, body: { prompt: 'x' } });

  it('tells a request missing x-workspace-id what is wrong (400) even when the key has spent its quota', async () => {
    const k = await key();
    for (let i = 0; i < limit; i++) expect((await valid(k)).status).toBe(404);
    expect((await valid(k)).status).toBe(429);
    const res = await headerless(k);
    expectError(res, 400);
    expect(failedFields(res)).toContain('header.x-workspace-id');
  });

  it('does not spend the generation quota on refused requests, on any of the three endpoints', async () => {
    const k = await key();
    const refused: TestResponse[] = [
      await headerless(k),
      await svc.request('GET', '/api/v1/workflow/not-a-uuid/run', { key: k }),
      await svc.request('POST', `/api/v1/workflow/${randomUUID()}/run/cancel`, { key: k, body: { runId: 'nope' } }),
    ];
    for (const res of refused) expectError(res, 400);
    const res = await valid(k);
    expect(res.status, res.text).toBe(404);
    expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"generation";r=${limit - 1};t=\\d+$`));
  });

  it('limits a flood of refused requests with a window of their own, leaving the generation quota whole', async () => {
    const k = await key();
    for (let i = 0; i < limit; i++) {
      const res = await headerless(k);
      expectError(res, 400);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"generation-refused";r=${limit - 1 - i};t=\\d+$`));
    }
    const flooded = await headerless(k);
    expectError(flooded, 429, 'generation-refused');
    expect(Number(flooded.headers.get('retry-after'))).toBeGreaterThan(0);
    // A 403 (access refused before the body is read) is a refusal too.
    const stranger = (await newKey(svc, ['workflow:read'])).key;
    for (let i = 0; i < limit; i++) {
      const res = await svc.request('POST', '/api/v1/workflow/generate', {
        key: stranger,
        headers: { 'x-workspace-id': svc.workspaceId },
        body: { prompt: 'x' },
      });
      expectError(res, 403);
    }
    expect((await headerless(stranger)).status).toBe(429);
    for (const owner of [k, stranger]) {
      const res = await valid(owner);
      expect(res.status, res.text).toBe(404);
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"generation";r=${limit - 1};t=\\d+$`));
    }
  });
});
