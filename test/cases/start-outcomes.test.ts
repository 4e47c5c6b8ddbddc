import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthContext } from '../../src/domain/auth-context.js';
import { CaseEnds } from '../../src/cases/case-ends.js';
import { CaseService } from '../../src/cases/case-service.js';
import type { CaseRecord } from '../../src/domain/case-records.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import { DomainError } from '../../src/errors.js';
import { Outbound } from '../../src/net/outbound.js';
import { CaseRepo } from '../../src/store/case-repo.js';
import { TaskRepo } from '../../src/store/task-repo.js';
import { EngineHealth, NoAnswerInTimeError } from '../../src/temporal/engine-health.js';
import type { CaseRunGateway, StartOutcome } from '../../src/temporal/gateways/case-runs.js';
import { startTestService, type TestService } from '../support/harness.js';
import { createWorkflow } from './support.js';
import { sleeper } from '../support/graphs.js';

/** A gateway whose start fails as told, and whose settle answers as told: no Temporal involved. */
class ScriptedRuns implements CaseRunGateway {
  started: CaseRunInput[] = [];
  constructor(
    private readonly startFails: boolean,
    private readonly settled: StartOutcome,
  ) {}
  start(input: CaseRunInput): Promise<string> {
    this.started.push(input);
    return this.startFails
      ? Promise.reject(new NoAnswerInTimeError('the workflow start did not answer within 10000 ms'))
      : Promise.resolve('run-1');
  }
  settle(): Promise<StartOutcome> {
    return Promise.resolve(this.settled);
  }
  progress(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  cancel(): Promise<boolean> {
    return Promise.resolve(false);
  }
  closedRun(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
}

/**
 * CaseService's rules for a start whose outcome it must settle, over a fake gateway: what execute answers and what
 * the case row says, for each thing the engine may tell afterwards.
 */
describe('execute when the start call fails', () => {
  let svc: TestService;
  let auth: AuthContext;
  let workflowId: string;
  beforeAll(async () => {
    svc = await startTestService({ role: 'api' });
    auth = await svc.service.context.services.authentication.authenticate(svc.key);
    workflowId = (await createWorkflow(svc, sleeper(0))).workflowId;
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
  });

  function casesOver(
    runs: CaseRunGateway,
    engine = new EngineHealth(),
    repo = new CaseRepo(svc.service.context.store.db),
  ): CaseService {
    const { config, logger, temporal, metrics, store, services } = svc.service.context;
    return new CaseService({
      config,
      logger,
      temporal,
      repo,
      workflows: services.workflows,
      files: services.files,
      outbound: new Outbound(),
      metrics,
      engine,
      runs,
      admission: services.admission,
      events: services.subscriptions,
      authentication: services.authentication,
      taskHistory: new TaskRepo(store.db),
      ends: new CaseEnds(),
    });
  }

  async function executeWith(runs: ScriptedRuns, engine?: EngineHealth) {
    const cases = casesOver(runs, engine);
    const { id } = await cases.initiate(auth, { workflowId, source: 'api', initialInput: {} });
    const outcome = await cases.execute(auth, id, { inputs: { text: 'x' } }).catch((err: unknown) => err);
    return { outcome, row: await cases.load(auth, id, 'case:read') };
  }

  it('links the run the engine says exists (202, RUNNING with its run id)', async () => {
    const { outcome, row } = await executeWith(new ScriptedRuns(true, { run: 'started', runId: 'run-7' }));
    expect(outcome).toMatchObject({ record: { status: 'RUNNING', temporalRunId: 'run-7' } });
    expect(row).toMatchObject({ status: 'RUNNING', temporalRunId: 'run-7' });
  });

  it('puts the case back to PENDING and answers 503 when the engine says no run exists', async () => {
    const engine = new EngineHealth();
    const { outcome, row } = await executeWith(new ScriptedRuns(true, { run: 'absent' }), engine);
    expect(outcome).toBeInstanceOf(DomainError);
    expect(outcome).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', retryAfterSeconds: 5 });
    expect((outcome as DomainError).message).toContain('stays PENDING');
    expect(row).toMatchObject({ status: 'PENDING', temporalRunId: null, inputs: null });
    // The failed start told the process the engine is down: the next execute is refused before any write.
    expect(engine.isUp()).toBe(false);
  });

  it('keeps the case accepted (202, RUNNING, no run id yet) when the engine cannot say', async () => {
    const { outcome, row } = await executeWith(new ScriptedRuns(true, { run: 'unknown' }));
    expect(outcome).toMatchObject({ record: { status: 'RUNNING' }, temporalUiUrl: null });
    expect(row).toMatchObject({ status: 'RUNNING', temporalRunId: null, inputs: { text: 'x' } });
  });

  it('refuses at once, writing nothing and starting nothing, while the engine is known down', async () => {
    const engine = new EngineHealth();
    engine.markDown('test');
    const runs = new ScriptedRuns(false, { run: 'absent' });
    const { outcome, row } = await executeWith(runs, engine);
    expect(outcome).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE' });
    expect(runs.started).toEqual([]);
    expect(row).toMatchObject({ status: 'PENDING', inputs: null });
  });

  it('lets what the start queued (an eagerly started run’s first activation) run before the run id is written', async () => {
    const order: string[] = [];
    class EagerRuns extends ScriptedRuns {
      override start(input: CaseRunInput): Promise<string> {
        // The worker's activation for an eagerly started run arrives as a callback queued beside the answer.
        setImmediate(() => order.push('activation'));
        return super.start(input);
      }
    }
    class OrderedRepo extends CaseRepo {
      override setRunId(caseId: string, runId: string): Promise<CaseRecord | undefined> {
        order.push('run id written');
        return super.setRunId(caseId, runId);
      }
    }
    const cases = casesOver(
      new EagerRuns(false, { run: 'absent' }),
      undefined,
      new OrderedRepo(svc.service.context.store.db),
    );
    const { id } = await cases.initiate(auth, { workflowId, source: 'api', initialInput: {} });
    const outcome = await cases.execute(auth, id, { inputs: { text: 'x' } });
    expect(outcome).toMatchObject({ record: { status: 'RUNNING', temporalRunId: 'run-1' } });
    expect(order).toEqual(['activation', 'run id written']);
  });
});
