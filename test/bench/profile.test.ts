import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cpuByArea, workerThreadProfiles, workflowThreadByArea } from '../../scripts/bench-profile.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bench-profile-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A bundle as webpack writes it: each module opens with its path on a line of its own. */
function writeBundle(): string {
  const lines = [
    '(() => {',
    '/***/ "../node_modules/@temporalio/common/lib/converter/payload-converter.js"',
    'function toPayload() {}',
    '/***/ "../node_modules/@temporalio/workflow/lib/workflow.js"',
    'function scheduleLocalActivity() {}',
    '/***/ "./dist/workflows/case-run.js"',
    'async function caseRun() {}',
    '})();',
  ];
  const file = path.join(dir, 'workflow-bundle.js');
  writeFileSync(file, lines.join('\n'));
  return pathToFileURL(file).href;
}

/**
 * One stack per sample, root first (function, url, 0-based line), at t = 1, 2, 3 … ms. A sample lasts until the next;
 * an idle one closes the list.
 */
function writeProfile(name: string, stacks: Array<Array<[string, string, number]>>): string {
  const nodes = [{ id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [] as number[] }];
  const samples = [...stacks, [['(idle)', '', -1] as [string, string, number]]].map((stack) => {
    let parent = nodes[0] as (typeof nodes)[number];
    for (const [functionName, url, lineNumber] of stack) {
      const node = { id: nodes.length + 1, callFrame: { functionName, url, lineNumber }, children: [] };
      parent.children.push(node.id);
      nodes.push(node);
      parent = node;
    }
    return parent.id;
  });
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify({ nodes, startTime: 0, samples, timeDeltas: samples.map(() => 1000) }));
  return file;
}

it("puts the workflow thread's samples in the bundle module they run in, the promise hook and vm's own time apart", () => {
  const bundle = writeBundle();
  const run: [string, string, number] = ['runInContext', 'node:vm', 138];
  const profile = writeProfile('CPU.20261207.194950.23816.1.002.cpuprofile', [
    [run, ['caseRun', bundle, 6]],
    [run, ['caseRun', bundle, 6], ['scheduleLocalActivity', bundle, 4]],
    [run, ['caseRun', bundle, 6], ['scheduleLocalActivity', bundle, 4], ['toPayload', bundle, 2]],
    [run, ['caseRun', bundle, 6], ['initAll', 'node:internal/promise_hooks', 22], ['init', 'vm-shared.js', 244]],
    [run, ['runInContext', '', -1]],
    [run, ['__TEMPORAL_CALL_INTO_SCOPE', 'evalmachine.<anonymous>', 0]],
    [['(garbage collector)', '', -1]],
    [['(idle)', '', -1]],
    [['postMessage', '', -1]],
    // Not counted: past the window's end (10 ms).
    [run, ['caseRun', bundle, 6]],
  ]);
  expect(workerThreadProfiles(dir, 0)).toEqual([profile]);
  const areas = workflowThreadByArea([profile], 0, 9500);
  expect(Object.fromEntries(areas)).toEqual({
    'our workflow code': 1,
    'Temporal SDK (in the sandbox)': 1,
    'payload converter (in the sandbox)': 1,
    "promise hooks (the SDK's stack per promise, async_hooks)": 1,
    'vm.runInContext itself (watchdog thread)': 1,
    "the context's globals swapped per call": 1,
    'garbage collection': 1,
    "the SDK's worker thread, Node (messages, vm)": 1,
  });
});

it("reads the main thread's samples by the areas their frames' files are in", () => {
  const profile = writeProfile('CPU.20261207.194950.23816.0.001.cpuprofile', [
    [
      ['handler', 'file:///srv/dist/src/api/cases.js', 10],
      ['execute', 'file:///srv/node_modules/kysely/dist/q.js', 3],
    ],
    [['poll', 'file:///srv/node_modules/@temporalio/worker/lib/worker.js', 5]],
    [['(program)', '', -1]],
    [['somewhere', 'node:net', 1]],
  ]);
  expect(workerThreadProfiles(dir, 0)).toEqual([]);
  expect(Object.fromEntries(cpuByArea([profile], 0, Infinity))).toEqual({
    'store (kysely, SQLite)': 1,
    'Temporal SDK (worker, client, core bridge)': 1,
    'V8 (compiling, runtime)': 1,
    other: 1,
  });
});
