import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type vm from 'node:vm';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { WorkflowCreator } from '@temporalio/worker/lib/workflow/interface.js';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm.js';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { preloadedWorkflowModules } from '../../src/temporal/workflow-preload.js';

/**
 * The preloaded workflow modules (src/temporal/workflow-preload.ts) are shared by every run of a workflow context
 * and deep-frozen: a run that wrote to what they hold would fail (frozen objects) or leave its state to the next
 * run (a Map, a Set, which freezing does not reach). Every recorded history (replay.test.ts) is replayed here by
 * one worker, in one reused context, as a worker's workflow thread runs them, and what the listed modules'
 * exports hold is compared after each run with what it was before the first.
 */
const dir = path.join(import.meta.dirname, 'histories');
/** The one that replays on no path by design (replay.test.ts). */
const histories = readdirSync(dir).filter((f) => f.endsWith('.bin') && f !== 'turnless-apart.bin');
/** Webpack's ids of the listed modules (relative to the project, where the build runs). */
const moduleIds = preloadedWorkflowModules.map((file) => `./${path.relative(projectRoot, file)}`);

/** A replay worker that keeps the context its runs share (replay runs its workflows in this thread). */
class ContextWorker extends Worker {
  static context: vm.Context | undefined;

  protected static override async createWorkflowCreator(
    ...args: Parameters<typeof Worker.createWorkflowCreator>
  ): Promise<WorkflowCreator> {
    const creator = await super.createWorkflowCreator(...args);
    if (!(creator instanceof ReusableVMWorkflowCreator)) throw new Error('the replay worker made no reused context');
    // Protected in the SDK's types: the context every run of this creator runs in.
    ContextWorker.context = Reflect.get(creator, 'context') as vm.Context;
    return creator;
  }
}

/**
 * What a value holds, as text, as far as it reaches: own properties (getters read, as webpack defines exports),
 * Map and Set entries, a RegExp's lastIndex; a function by its own properties; an object met again by where it
 * was first. The values are the workflow context's (another realm), so kinds are told by their tags.
 */
function stateOf(root: unknown): string {
  const seen = new Map<object, string>();
  const walk = (value: unknown, at: string): unknown => {
    if (typeof value === 'bigint' || typeof value === 'symbol') return String(value);
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
    const first = seen.get(value);
    if (first !== undefined) return `<same as ${first}>`;
    seen.set(value, at);
    const tag = Object.prototype.toString.call(value);
    const held: Record<string, unknown> = { tag };
    if (tag === '[object Map]') {
      held.entries = [...Map.prototype.entries.call(value as Map<unknown, unknown>)].map(([k, v], i) => [
        walk(k, `${at}<${i}`),
        walk(v, `${at}>${i}`),
      ]);
    } else if (tag === '[object Set]') {
      held.entries = [...Set.prototype.values.call(value as Set<unknown>)].map((v, i) => walk(v, `${at}<${i}`));
    } else if (tag === '[object RegExp]') {
      held.lastIndex = (value as RegExp).lastIndex;
    }
    for (const key of Reflect.ownKeys(value)) {
      const property = Object.getOwnPropertyDescriptor(value, key);
      const name = `${at}.${String(key)}`;
      held[String(key)] = walk(property?.get ? property.get.call(value) : property?.value, name);
    }
    return held;
  };
  return JSON.stringify(walk(root, ''));
}

/** What the listed modules export, read from the context's shared module cache (no run is active). */
function preloadedState(): string {
  const { context } = ContextWorker;
  if (!context) throw new Error('the replay worker has not made its context yet');
  const cache = (context as { __webpack_module_cache__: Record<string, { exports: unknown } | undefined> })
    .__webpack_module_cache__;
  const modules = moduleIds.map((id) => {
    const module = cache[id];
    if (!module) throw new Error(`${id} is not in the context's shared module cache`);
    return [id, module.exports] as const;
  });
  return stateOf(Object.fromEntries(modules));
}

describe('preloaded workflow modules, across the runs of one context', () => {
  it('replay every recorded history and hold after each run what they held before the first', async () => {
    let before: string | undefined;
    function* recorded() {
      for (const file of histories) {
        // The worker and its context exist before it takes the first history.
        before ??= preloadedState();
        yield { history: temporal.api.history.v1.History.decode(readFileSync(path.join(dir, file))), workflowId: file };
      }
    }
    const failed: string[] = [];
    const changedBy: string[] = [];
    const replay = ContextWorker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath } }, recorded());
    for await (const result of replay) {
      if (result.error) failed.push(`${result.workflowId}: ${result.error.message}`);
      if (preloadedState() !== before) changedBy.push(result.workflowId);
    }
    expect(failed).toEqual([]);
    expect(changedBy).toEqual([]);
    expect(before).toContain('caseRunChanges');
  });
});
