import { describe, expect, it } from 'vitest';
import { LocalActivityReruns } from '../../src/temporal/local-activity-reruns.js';

const local = (runId: string, activityId: string, attempt = 1) => ({
  isLocal: true,
  attempt,
  activityId,
  workflowExecution: { workflowId: `case-${runId}`, runId },
});

describe('recognising a local activity that runs again', () => {
  it('says nothing of a first run, and names a retry by its attempt', () => {
    const reruns = new LocalActivityReruns();
    expect(reruns.observe(local('r1', '1'))).toBeUndefined();
    expect(reruns.observe(local('r1', '2'))).toBeUndefined();
    expect(reruns.observe(local('r2', '1'))).toBeUndefined();
    expect(reruns.observe(local('r1', '2', 2))).toBe('retry');
  });

  it('calls the same attempt of the same activity of the same run a repeat (its result never reached the history)', () => {
    const reruns = new LocalActivityReruns();
    reruns.observe(local('r1', '1'));
    expect(reruns.observe(local('r1', '1'))).toBe('repeat');
    reruns.observe(local('r1', '3', 2));
    expect(reruns.observe(local('r1', '3', 2))).toBe('repeat');
  });

  it('ignores regular activities, which the server retries and counts itself', () => {
    const reruns = new LocalActivityReruns();
    const regular = { ...local('r1', '1', 3), isLocal: false };
    expect(reruns.observe(regular)).toBeUndefined();
    expect(reruns.observe(regular)).toBeUndefined();
  });

  it('forgets the oldest executions first, so memory stays bounded', () => {
    const reruns = new LocalActivityReruns();
    reruns.observe(local('old', '1'));
    for (let i = 0; i < 20_000; i++) reruns.observe(local('busy', String(i)));
    expect(reruns.observe(local('busy', '19999'))).toBe('repeat');
    expect(reruns.observe(local('old', '1'))).toBeUndefined();
  });
});
