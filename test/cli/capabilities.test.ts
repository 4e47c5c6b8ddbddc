import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.js';
import { newCaller } from '../support/keys.js';
import { cli, cliEnv, type CliRun } from './support.js';

const json = (run: CliRun): unknown => JSON.parse(run.stdout);
const noStack = (run: CliRun) => expect(run.stdout + run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);

/** Asks until `found` returns a value (the service acts on its own: a task opening, a schedule firing). */
async function until<T>(ask: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await ask();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

interface Finished {
  caseId: string;
  status: string;
  results: Record<string, { value: unknown }>;
}
const values = (body: Finished) => Object.fromEntries(Object.entries(body.results).map(([k, v]) => [k, v.value]));

/** The examples that need more than `case run` (a person, a schedule, a sender), each driven through the CLI. */
describe('CLI commands for tasks, schedules, hooks and reruns (with their examples)', () => {
  let svc: TestService;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    svc = await startTestService({ config: { schedules: { minIntervalSeconds: 1 } } });
    env = cliEnv(svc);
  });
  afterAll(async () => {
    await svc?.stop();
  });

  const apply = async (file: string) => {
    const applied = await cli(['workflow', 'apply', '-f', `examples/${file}`, '--json'], env);
    expect(applied.code, applied.stderr).toBe(0);
  };

  it('human-task.yaml: the case waits, the task is listed, claimed, released and completed through the CLI', async () => {
    await apply('human-task.yaml');
    const started = await cli(['case', 'run', 'Approve a payment', '--input', 'amount=420', '--json'], env);
    expect(started.code, started.stderr).toBe(0);
    const { caseId } = json(started) as { caseId: string };
    const task = await until(async () => {
      const listed = await cli(['task', 'list', '--case', caseId, '--status', 'open', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      return (json(listed) as Array<{ taskId: string; title: string }>)[0];
    }, 'the task to open');
    expect(task.title).toMatch(/^Approve 420(\.0)? EUR$/);
    const shown = await cli(['task', 'show', task.taskId], env);
    expect(shown.stdout).toContain('form:\n  approved: bool\n  note: str (optional)');
    expect((await cli(['task', 'claim', task.taskId], env)).stdout).toMatch(/claimed/);
    expect((await cli(['task', 'release', task.taskId], env)).stdout).toMatch(/open/);

    // The form is checked by the service: its message and the field, nothing decided.
    const wrong = await cli(['task', 'complete', task.taskId, '--output', 'note=no decision'], env);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/\(HTTP 400\)\n {2}.*approved.*: /);
    noStack(wrong);

    const done = await cli(['task', 'complete', task.taskId, '-o', 'approved=true', '-o', 'note=ok by me'], env);
    expect(done.code, done.stderr).toBe(0);
    const finished = await cli(['case', 'watch', caseId, '--json'], env);
    expect(finished.code, finished.stderr).toBe(0);
    expect(values(json(finished) as Finished)).toEqual({ approved: true, note: 'ok by me' });
    const again = await cli(['task', 'complete', task.taskId, '-o', 'approved=false'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(HTTP 409)');
    expect(json(await cli(['task', 'list', '--status', 'open', '--json'], env)) as unknown[]).toEqual([]);
  }, 120_000);

  it('schedule.yaml: an interval schedule starts a case, is paused, listed and deleted', async () => {
    await apply('schedule.yaml');
    const bad = await cli(['schedule', 'create', 'Heartbeat', '--every', '1s', '--cron', '* * * * *'], env);
    expect(bad).toMatchObject({ code: 2, stderr: 'caseflow: give one of --cron and --every\n' });
    const created = await cli(
      ['schedule', 'create', 'Heartbeat', '--every', '1s', '-i', 'source=timer', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const { scheduleId } = json(created) as { scheduleId: string; intervalSeconds: number };
    const caseId = await until(async () => {
      const shown = json(await cli(['schedule', 'show', scheduleId, '--json'], env)) as {
        recentFirings: Array<{ caseId: string | null }>;
      };
      return shown.recentFirings.find((f) => f.caseId)?.caseId ?? undefined;
    }, 'a firing');
    const watched = await cli(['case', 'watch', caseId, '--json'], env);
    expect(values(json(watched) as Finished)).toEqual({ message: 'beat from timer' });
    expect((await cli(['schedule', 'pause', scheduleId], env)).stdout).toMatch(/paused\s+every 1 s/);
    expect((await cli(['schedule', 'list', '--workflow', 'Heartbeat'], env)).stdout).toContain(scheduleId);
    const deleted = await cli(['schedule', 'delete', scheduleId], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await cli(['schedule', 'show', scheduleId], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('(HTTP 404)');
  }, 120_000);

  it('webhook.yaml: a hook prints its URL and secret once; a signed POST starts a case, a wrong one is refused', async () => {
    await apply('webhook.yaml');
    const shown = await cli(
      ['hook', 'create', 'Greet a new user', '--name', 'signups', '--map', 'name=/user/name'],
      env,
    );
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^url: {4}http:\/\/.+\/hooks\/[0-9a-f-]{36}$/m);
    expect(shown.stdout).toMatch(/^secret: whsec_/m);
    expect(shown.stdout).toContain('caseflow hook send');
    const hook = json(
      await cli(
        ['hook', 'create', 'Greet a new user', '--name', 'signups 2', '--map', 'name=/user/name', '--json'],
        env,
      ),
    ) as { hookId: string; url: string; secret: string };
    const sent = await cli(
      ['hook', 'send', hook.url, '--secret', hook.secret, '--data', '{"user": {"name": "Ada"}}', '--json'],
      env,
    );
    expect(sent.code, sent.stderr).toBe(0);
    const { caseId } = json(sent) as { caseId: string };
    expect(values(json(await cli(['case', 'watch', caseId, '--json'], env)) as Finished)).toEqual({
      greeting: 'Welcome, Ada!',
    });
    const rotated = json(await cli(['hook', 'rotate', hook.hookId, '--grace', '0', '--json'], env)) as {
      secret: string;
    };
    expect(rotated.secret).not.toBe(hook.secret);
    const stale = await cli(
      ['hook', 'send', hook.url, '--secret', hook.secret, '--data', '{"user": {"name": "Eve"}}'],
      env,
    );
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('(HTTP 401)');
    const listed = await cli(['hook', 'list', 'Greet a new user'], env);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
    expect((await cli(['hook', 'delete', hook.hookId], env)).code).toBe(0);
    const afterDelete = await cli(['hook', 'send', hook.url, '--secret', rotated.secret, '--data', '{}'], env);
    expect(afterDelete.stderr).toContain('(HTTP 404)');
  }, 120_000);

  it('reruns one case with other inputs, then every completed case of a workflow as a batch', async () => {
    const first = json(
      await cli(['case', 'run', 'Heartbeat', '-i', 'source=first', '--wait', '--json'], env),
    ) as Finished;
    const rerun = await cli(['case', 'rerun', first.caseId, '-i', 'source=again', '--wait', '--json'], env);
    expect(rerun.code, rerun.stderr).toBe(0);
    const body = json(rerun) as Finished & { rerunOf?: string };
    expect(body.caseId).not.toBe(first.caseId);
    expect(values(body)).toEqual({ message: 'beat from again' });
    const notFailed = await cli(['case', 'rerun', first.caseId, '--from', 'failed'], env);
    expect(notFailed.code).toBe(1);
    expect(notFailed.stderr).toContain('(HTTP 4');
    const both = await cli(['case', 'rerun', first.caseId, '--status', 'FAILED'], env);
    expect(both.code).toBe(2);

    const batch = await cli(
      ['case', 'rerun', '--workflow', 'Heartbeat', '--status', 'COMPLETED', '--wait', '--json'],
      env,
    );
    expect(batch.code, batch.stderr + batch.stdout).toBe(0);
    const progress = json(batch) as {
      batchId: string;
      status: string;
      matched: number;
      started: number;
      pending: number;
    };
    expect(progress).toMatchObject({ status: 'COMPLETED', pending: 0 });
    expect(progress.started).toBe(progress.matched);
    expect(progress.matched).toBeGreaterThanOrEqual(2);
    const read = await cli(['case', 'rerun-batch', progress.batchId], env);
    expect(read.stdout).toMatch(new RegExp(`^batch ${progress.batchId} {2}COMPLETED: `));
  }, 180_000);

  it('another organization’s key reaches none of these tasks, schedules or hooks', async () => {
    const other = await newCaller(svc, ['workflow:full', 'case:full'], { verified: false });
    const theirs = { ...env, CASEFLOW_API_KEY: other.key };
    expect(json(await cli(['task', 'list', '--json'], theirs)) as unknown[]).toEqual([]);
    expect(json(await cli(['schedule', 'list', '--json'], theirs)) as unknown[]).toEqual([]);
    const hooks = await cli(['hook', 'list', 'Greet a new user'], theirs);
    expect(hooks.stderr).toContain('no workflow named "Greet a new user"');
  });
});
