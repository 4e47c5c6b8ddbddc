import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hookJobOf } from '../../scripts/bench-subjects.js';
import { checkSumAnswer, deliverSum, type SyncHookTarget } from '../../scripts/hook-sender.js';
import { startTestService, type TestService } from '../support/harness.js';

/**
 * The `caseflow-hook` subject of `npm run bench -- e2e`: its setup (the benches' Python workflow behind a sync
 * Standard Webhooks hook) and its sender (a signed POST whose answer must hold the Python result).
 */
describe('the caseflow-hook bench subject', () => {
  let svc: TestService;
  let target: SyncHookTarget;
  beforeAll(async () => {
    svc = await startTestService();
    const job = (await hookJobOf(svc.url, svc.key, 20_000))([]);
    if (job.kind !== 'hook') throw new Error(`hookJobOf made a ${job.kind} job`);
    target = job;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  it('creates a sync hook whose signed delivery is answered 200 with the Python sum', async () => {
    expect(target.url).toMatch(new RegExp(`^${svc.url}/hooks/[0-9a-f-]{36}$`));
    const ms = await deliverSum(target, 41);
    expect(ms).toBeGreaterThan(0);
  });

  it('fails a delivery the hook refuses (another secret): 401, not a measured case', async () => {
    const forged = { ...target, secret: 'whsec_' + Buffer.from('not the hook secret').toString('base64') };
    await expect(deliverSum(forged, 1)).rejects.toThrow(/answered 401 .*UNAUTHORIZED/);
  });

  it('accepts only the 200 of a completed case holding the expected sum', () => {
    const completed = { status: 'COMPLETED', results: { sum: { value: 42 } } };
    expect(() => checkSumAnswer(200, completed, 42)).not.toThrow();
    expect(() => checkSumAnswer(200, completed, 43)).toThrow(/sum 43 was due/);
    expect(() => checkSumAnswer(202, { caseId: 'c', status: 'RUNNING' }, 42)).toThrow(/answered 202/);
    expect(() => checkSumAnswer(200, { status: 'FAILED', results: { sum: { value: 42 } } }, 42)).toThrow();
    expect(() => checkSumAnswer(200, null, 42)).toThrow();
  });
});
