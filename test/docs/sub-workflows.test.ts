import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { runWalkthrough, walkthrough } from './walkthrough.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

describe('docs/cases.md: Sub-workflows', () => {
  it('runs the walk-through as written', async () => {
    const steps = walkthrough('cases.md', 'Sub-workflows');
    expect(steps.map((s) => `${s.method} ${s.status}`)).toEqual([
      'POST 201',
      'POST 201',
      'PATCH 400',
      'POST 201',
      'POST 202',
      'GET 200',
      'GET 200',
      'GET 200',
    ]);
    await runWalkthrough(svc, steps);
  });
});
