import { describe, expect, it } from 'vitest';
import { admissible, fairShare } from '../../src/cases/admission/admission-rules.js';
import { fairShareSettings } from '../../src/cases/admission/case-admission.js';
import type { QueuedCase } from '../../src/domain/admission.js';

/** The fair share's arithmetic (docs/concurrency.md#fair-share), without a store. */
describe('fair share rules', () => {
  it('splits the budget over the active organizations, never below the floor, and is no limit alone', () => {
    const rule = { budget: 8, floor: 2 };
    expect(fairShare(rule, 0)).toBeNull();
    expect(fairShare(rule, 1)).toBe(4);
    expect(fairShare(rule, 2)).toBe(2);
    expect(fairShare(rule, 9)).toBe(2);
  });

  it('a budget of 0 is twice the Python servers; off is no rule', () => {
    const configured = {
      enabled: true,
      budget: 0,
      floor: 2,
      activeWindowMs: 30_000,
      runnableMs: 5_000,
      saturation: 0.7,
    };
    expect(fairShareSettings(configured, 3)).toEqual({
      budget: 6,
      floor: 2,
      activeWindowMs: 30_000,
      runnableMs: 5_000,
      saturation: 0.7,
    });
    expect(fairShareSettings({ ...configured, budget: 5 }, 3)).toMatchObject({ budget: 5 });
    expect(fairShareSettings({ ...configured, enabled: false }, 3)).toBeNull();
  });

  it('admits queued cases only while the recent runs are under the share, whatever the cap says', () => {
    const queue: QueuedCase[] = ['a', 'b', 'c'].map((id, i) => ({
      id,
      workflowId: 'wf',
      queuedAt: `2026-11-26T00:00:0${i}.000Z`,
      workflowCap: null,
    }));
    const state = { organizationCap: null, held: 7, share: 2, recent: 1, heldByWorkflow: new Map<string, number>() };
    expect(admissible(queue, state).admitted.map((q) => q.id)).toEqual(['a']);
    const capped = { organizationCap: 8, held: 7, share: 4, recent: 0, heldByWorkflow: new Map<string, number>() };
    expect(admissible(queue, capped).admitted.map((q) => q.id)).toEqual(['a']);
    const unshared = {
      organizationCap: null,
      held: 7,
      share: null,
      recent: 5,
      heldByWorkflow: new Map<string, number>(),
    };
    expect(admissible(queue, unshared).admitted).toHaveLength(3);
  });
});
