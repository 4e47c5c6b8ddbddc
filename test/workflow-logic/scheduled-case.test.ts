import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseActivities } from '../../activities/cases.js';
import type { ScheduleActivities } from '../../activities/schedules.js';
import type { CaseRunInput } from '../../src/domain/cases.js';
import { firingWorkflowId, scheduledCaseContract } from '../../src/temporal/contracts/scheduled-case.js';
import { startWorkflow } from '../../src/temporal/contracts/start.js';
import { doubleCase } from '../support/case-runs.js';
import { WorkflowLogic } from './support.js';

/** The firing workflow over mocked activities: its own two and the case run's (its child). */
type Mocks = Pick<ScheduleActivities, 'openScheduledFiring' | 'linkScheduledCase'> &
  Pick<CaseActivities, 'runLastNode' | 'caseEnd' | 'endCase'>;
let logic: WorkflowLogic<Mocks>;

beforeAll(async () => {
  logic = await WorkflowLogic.start<Mocks>([
    'openScheduledFiring',
    'linkScheduledCase',
    'runLastNode',
    'caseEnd',
    'endCase',
  ]);
});
afterAll(async () => {
  await logic?.stop();
});

const caseRun = (): CaseRunInput => doubleCase().input;

function fire(scheduleId: string, mocks: Mocks) {
  return logic.run(mocks, (client, taskQueue) =>
    startWorkflow(client.workflow, scheduledCaseContract, {
      taskQueue,
      workflowId: `${firingWorkflowId(scheduleId)}-2026-01-01T00:00:00Z`,
      args: [{ scheduleId }],
    }),
  );
}

const unused = (name: string) => () => Promise.reject(new Error(`${name} should not be called`));

describe('scheduledCase', () => {
  it('runs the opened case as its child, links its run, and answers the case outcome', async () => {
    const run = caseRun();
    const linked: Array<{ caseId: string; runId: string }> = [];
    const opened: string[] = [];
    let attempts = 0;
    const outcome = await fire(randomUUID(), {
      openScheduledFiring(input) {
        opened.push(input.firingWorkflowId);
        // The store was away once: the activity is retried, not the firing lost.
        if (++attempts === 1) return Promise.reject(new Error('store unavailable'));
        return Promise.resolve({
          firing: 'started',
          run,
          labels: { summary: 's', details: 'd', searchAttributes: [] },
        });
      },
      linkScheduledCase(input) {
        linked.push(input);
        return Promise.resolve();
      },
      // The case's one node is its last: it runs with the case's end (which the activity writes).
      runLastNode: () =>
        Promise.resolve({
          node: {
            outputs: { b: 4 },
            logs: [],
            startedAt: new Date().toISOString(),
            finishedAt: new Date().toISOString(),
          },
          ended: 'here',
        }),
      caseEnd: unused('caseEnd'),
      endCase: unused('endCase'),
    });
    expect(outcome.result).toEqual({ firing: 'started', caseId: run.caseId, status: 'COMPLETED' });
    expect(opened).toHaveLength(2);
    expect(new Set(opened).size).toBe(1);
    expect(linked).toHaveLength(1);
    expect(linked[0]?.caseId).toBe(run.caseId);
  });

  it('ends with the failed firing, starting no case, when the case cannot be created', async () => {
    const outcome = await fire(randomUUID(), {
      openScheduledFiring: () => Promise.resolve({ firing: 'failed', error: 'Workflow w has no active version' }),
      linkScheduledCase: unused('linkScheduledCase'),
      runLastNode: unused('runLastNode'),
      caseEnd: unused('caseEnd'),
      endCase: unused('endCase'),
    });
    expect(outcome.result).toEqual({ firing: 'failed', error: 'Workflow w has no active version' });
  });

  it('answers FAILED for a case that failed, without failing the firing', async () => {
    const run = caseRun();
    const outcome = await fire(randomUUID(), {
      openScheduledFiring: () =>
        Promise.resolve({ firing: 'started', run, labels: { summary: 's', details: 'd', searchAttributes: [] } }),
      linkScheduledCase: () => Promise.resolve(),
      runLastNode: () => Promise.reject(new Error('boom')),
      caseEnd: () => Promise.resolve(null),
      endCase: () => Promise.resolve({}),
    });
    expect(outcome.result).toEqual({ firing: 'started', caseId: run.caseId, status: 'FAILED' });
  });
});
