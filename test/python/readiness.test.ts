import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.js';
import { pythonSandboxModes, type PythonSandboxMode } from '../../src/python/types.js';
import { answered, http, startTestService, type TestService } from '../support/harness.js';
import { parseSamples, valueOf } from '../support/prometheus.js';

/**
 * What an operator sees from outside: the mode gauge on /metrics (behind its token when one is set). /readyz, which
 * anyone may call, does not tell whether tenant code runs unsandboxed.
 */
async function observedMode(svc: TestService): Promise<Record<string, number>> {
  const ready = await answered(createClient({ baseUrl: svc.url }).GET('/readyz'), 200);
  // Whatever the mode, the store and Temporal answering make the service ready.
  expect(ready).toEqual({
    status: 'ready',
    checks: {
      store: { ok: true, latencyMs: expect.any(Number) },
      temporal: { ok: true, latencyMs: expect.any(Number) },
    },
  });
  const scrape = await http(`${svc.url}/metrics`, 'GET');
  expect(scrape.status).toBe(200);
  const samples = parseSamples(scrape.text);
  const gauge = Object.fromEntries(
    pythonSandboxModes.map((mode) => [mode, valueOf(samples, 'caseflow_python_sandbox_mode', { mode }) ?? NaN]),
  );
  return gauge;
}

const gaugeOf = (current: PythonSandboxMode) =>
  Object.fromEntries(pythonSandboxModes.map((mode) => [mode, mode === current ? 1 : 0]));

const cases: Array<{ title: string; python: Record<string, unknown>; mode: PythonSandboxMode }> = [
  // The test host has bubblewrap (scripts/setup.sh installs it): a host without must fail here, not skip.
  { title: 'bwrap at the configured path', python: {}, mode: 'contained' },
  { title: 'no bwrap at the configured path', python: { bwrapPath: '/nonexistent/bwrap' }, mode: 'refusing' },
  {
    title: 'no bwrap at the configured path, unsandboxed allowed',
    python: { bwrapPath: '/nonexistent/bwrap', allowUnsandboxed: true },
    mode: 'unsandboxed',
  },
];

describe.each(cases)('the Python sandbox mode with $title', ({ python, mode }) => {
  let svc: TestService;
  beforeAll(async () => {
    // The pool also reads the opt-in from the environment: only the configuration decides here.
    delete process.env.CASEFLOW_PYTHON_ALLOW_UNSANDBOXED;
    svc = await startTestService({ role: 'api', config: { python: { poolSize: 1, ...python } } });
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it(`is ${mode} in caseflow_python_sandbox_mode, and readiness neither depends on it nor tells it`, async () => {
    expect(svc.service.context.python.stats().mode).toBe(mode);
    expect(await observedMode(svc)).toEqual(gaugeOf(mode));
  });
});
