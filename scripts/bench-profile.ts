import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The Node main thread's CPU by area of the service, read from the V8 CPU
 * profiles `--cpu-prof` writes (BENCH_E2E_PROFILE_DIR), over the time
 * window of one bench level. The thread-level figures of bench-proc say how
 * much the main thread costs; this says what in it.
 */

interface CallFrame {
  functionName: string;
  url: string;
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
  return readdirSync(dir)
    .filter((f) => /^CPU\..*\.0\.\d+\.cpuprofile$/.test(f))
    .map((f) => path.join(dir, f))
    .filter((f) => statSync(f).mtimeMs >= sinceMs);
}

/** Milliseconds of main-thread CPU per area within [fromUs, toUs] (monotonic microseconds), summed over `files`. */
export function cpuByArea(files: string[], fromUs: number, toUs: number): Map<string, number> {
  const totals = new Map<string, number>();
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
    const areaOf = new Map<number, string | null>();
    const classify = (id: number): string | null => {
      const known = areaOf.get(id);
      if (known !== undefined) return known;
      const leaf = byId.get(id)?.callFrame.functionName ?? '';
      let area: string | null = Object.hasOwn(special, leaf) ? (special[leaf] ?? null) : 'other';
      if (area === 'other') {
        const urls: string[] = [];
        for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
          urls.push(byId.get(cur)?.callFrame.url ?? '');
        }
        area = areas.find(([, pattern]) => urls.some((u) => pattern.test(u)))?.[0] ?? 'other';
      }
      areaOf.set(id, area);
      return area;
    };
    // A sample's time is the delta to the next one.
    let at = profile.startTime;
    for (let i = 0; i < profile.samples.length; i++) {
      at += profile.timeDeltas[i] ?? 0;
      const spent = profile.timeDeltas[i + 1] ?? 0;
      const id = profile.samples[i];
      if (id === undefined || at < fromUs || at > toUs) continue;
      const area = classify(id);
      if (area) totals.set(area, (totals.get(area) ?? 0) + spent / 1000);
    }
  }
  return totals;
}

/** The monotonic clock in microseconds, as the profiles' timestamps read it. */
export function monotonicUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
