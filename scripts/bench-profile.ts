import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The Node main thread's CPU by area of the service, and the workflow
 * thread's time by area, read from the V8 CPU profiles `--cpu-prof` writes
 * (BENCH_E2E_PROFILE_DIR), over the time window of one bench level. The
 * thread-level figures of bench-proc say how much each thread costs; this
 * says what in it.
 */

interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** Microseconds on the system's monotonic clock (process.hrtime's). */
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Areas, tried in this order against every frame of a sample's stack: a
 * store query made by an API handler counts as store, a Temporal start made
 * by one as Temporal SDK; what none claims is "other" (Node internals,
 * sockets, our code between the areas).
 */
const areas: Array<[string, RegExp]> = [
  ['store (kysely, SQLite)', /node_modules\/(kysely|better-sqlite3|pg)\/|\/src\/store\//],
  ['Python calls', /\/src\/python\//],
  ['callback delivery (HTTP client, signing, outbound policy)', /node_modules\/got\/|\/src\/(callbacks|net)\//],
  ['Temporal SDK (worker, client, core bridge)', /node_modules\/(@temporalio|rxjs|protobufjs)\//],
  [
    'HTTP API (express, body parsing, validation, request log)',
    /node_modules\/(express|router|body-parser|raw-body|pino-http|zod)\/|\/src\/(api|auth)\//,
  ],
];

const special: Record<string, string | null> = {
  '(idle)': null,
  '(garbage collector)': 'garbage collection',
  '(program)': 'V8 (compiling, runtime)',
};

/** Main-thread profiles (thread 0) written into `dir` since `sinceMs`. */
export function mainThreadProfiles(dir: string, sinceMs: number): string[] {
  return profilesSince(dir, sinceMs, /^CPU\..*\.0\.\d+\.cpuprofile$/);
}

/** Worker-thread profiles (any thread but 0: the workflow thread is the service's one worker thread) since `sinceMs`. */
export function workerThreadProfiles(dir: string, sinceMs: number): string[] {
  return profilesSince(dir, sinceMs, /^CPU\..*\.[1-9]\d*\.\d+\.cpuprofile$/);
}

function profilesSince(dir: string, sinceMs: number, name: RegExp): string[] {
  return readdirSync(dir)
    .filter((f) => name.test(f))
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= sinceMs);
}

/** Names the area of one sample from its stack, leaf first; null leaves it out (idle). */
type Classifier = (stack: CallFrame[]) => string | null;

/** Milliseconds of a thread's time per area within [fromUs, toUs] (monotonic microseconds), summed over `files`. */
function timeByArea(files: string[], fromUs: number, toUs: number, classify: Classifier): Map<string, number> {
  const totals = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const areaOf = new Map<number, string | null>();
    const area = (id: number): string | null => {
      if (!areaOf.has(id)) {
        const stack: CallFrame[] = [];
        for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
          const frame = byId.get(cur)?.callFrame;
          if (frame) stack.push(frame);
        }
        areaOf.set(id, classify(stack));
      }
      return areaOf.get(id) ?? null;
    };
    // A sample's time is the delta to the next one.
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i] ?? 0;
      const spent = profile.timeDeltas[i + 1] ?? 0;
      const id = profile.samples[i];
      if (id === undefined || at < fromUs || at > toUs) continue;
      const name = area(id);
      if (name) totals.set(name, (totals.get(name) ?? 0) + spent / 1000);
    }
  }
  return totals;
}

/** V8's own entries (idle, GC, compiling), or undefined for a frame of code. */
function specialArea(leaf: CallFrame | undefined): string | null | undefined {
  const name = leaf?.functionName ?? '';
  return Object.hasOwn(special, name) ? (special[name] ?? null) : undefined;
}

/** Milliseconds of main-thread CPU per area within [fromUs, toUs] (monotonic microseconds), summed over `files`. */
export function cpuByArea(files: string[], fromUs: number, toUs: number): Map<string, number> {
  return timeByArea(files, fromUs, toUs, (stack) => {
    const known = specialArea(stack[0]);
    if (known !== undefined) return known;
    return areas.find(([, pattern]) => stack.some((frame) => pattern.test(frame.url)))?.[0] ?? 'other';
  });
}

/** A frame of a promise hook: the SDK's (v8.promiseHooks) or async_hooks' (AsyncLocalStorage). */
function isPromiseHook(frame: CallFrame): boolean {
  return (
    frame.url === 'node:internal/promise_hooks' ||
    (frame.url === 'node:internal/async_hooks' && frame.functionName.startsWith('promise'))
  );
}

/** The webpack modules of a workflow bundle: the line each starts at (0-based, ascending) and its path. */
function bundleModules(file: string): Array<[number, string]> {
  const modules: Array<[number, string]> = [];
  readFileSync(file, 'latin1')
    .split('\n')
    .forEach((line, i) => {
      const start = /^\/\*\*\*\/ "(.*)"$/.exec(line);
      if (start?.[1] !== undefined) modules.push([i, start[1]]);
    });
  return modules;
}

/** The module a line of the bundle belongs to ('' before the first). */
function moduleAt(modules: Array<[number, string]>, line: number): string {
  let [low, high, found] = [0, modules.length - 1, ''];
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [startLine, name] = modules[mid] as [number, string];
    if (startLine <= line) [found, low] = [name, mid + 1];
    else high = mid - 1;
  }
  return found;
}

/**
 * The workflow thread's time per area within [fromUs, toUs]: the SDK's promise hook wherever it runs, the
 * `vm.runInContext` calls themselves (Node starts a watchdog thread for each: the SDK's deadlock timeout), the
 * swap of the reused context's globals, and the bundle's code by the webpack module it is in (ours is under
 * ./dist/). A profile counts wall time while the thread is not idle: compare the areas with each other, and take
 * the thread's CPU from the bench's per-thread figures.
 */
export function workflowThreadByArea(files: string[], fromUs: number, toUs: number): Map<string, number> {
  const bundles = new Map<string, Array<[number, string]>>();
  const modulesOf = (url: string): Array<[number, string]> => {
    let modules = bundles.get(url);
    if (!modules) bundles.set(url, (modules = bundleModules(fileURLToPath(url))));
    return modules;
  };
  return timeByArea(files, fromUs, toUs, (stack) => {
    const leaf = stack[0];
    const known = specialArea(leaf);
    if (known !== undefined) return known;
    if (stack.some(isPromiseHook)) return "promise hooks (the SDK's stack per promise, async_hooks)";
    if (leaf?.functionName === 'runInContext' && leaf.url === '') return 'vm.runInContext itself (watchdog thread)';
    if (leaf?.url.startsWith('evalmachine')) return "the context's globals swapped per call";
    const code = stack.find((frame) => frame.url.endsWith('/workflow-bundle.js'));
    if (!code) return "the SDK's worker thread, Node (messages, vm)";
    const module = moduleAt(modulesOf(code.url), code.lineNumber);
    if (module.startsWith('./dist/')) return 'our workflow code';
    if (/@temporalio\/common\/lib\/(converter|encoding)/.test(module)) return 'payload converter (in the sandbox)';
    return 'Temporal SDK (in the sandbox)';
  });
}

/** The monotonic clock in microseconds, as the profiles' timestamps read it. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
