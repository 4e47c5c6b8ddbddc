import { randomBytes } from 'node:crypto';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { setTimeout } from 'node:timers/promises';
import type { Payload } from '@temporalio/common';
import { SecretBox } from '../src/crypto/secret-box.js';
import { PayloadEncryption } from '../src/temporal/payload-encryption.js';

/**
 * One case's payloads as the codec sees them (test/cases/statements.test.ts counts them): sealed, by size in
 * bytes (of the order of the e2e bench's input → Python → output case); the first five are opened again.
 */
const opened = { runInput: 2000, runNodeInput: 800, runNodeResult: 300, endCaseInput: 1500, endCaseResult: 50 };
const sealedOnly = { runSummary: 60, runDetails: 150, runNodeSummary: 40, endCaseSummary: 40, runResult: 200 };
const CASES = Number(process.env.BENCH_CODEC_CASES ?? 20_000);

const payload = (bytes: number): Payload => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode('x'.repeat(bytes)),
});

/**
 * `npm run bench -- codec`: the payload codec's CPU per case on this thread (10 AES-GCM seals, 5 opens), no Temporal
 * around it, and the young-generation collections (scavenges) its garbage caused. Run the builds of two checkouts in
 * turn (`node --max-semi-space-size=2 <dir>/dist/scripts/bench.js codec`, the service's young generation) for an A/B.
 */
export async function benchCodec(): Promise<void> {
  const codec = new PayloadEncryption(new SecretBox([{ id: 'bench', key: randomBytes(32) }]));
  const all = { ...opened, ...sealedOnly };
  // Built once: the codec only reads what it seals.
  const clear = Object.values(all).map(payload);
  let scavenges = 0;
  let scavengeMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries().filter(isScavenge)) {
      scavenges++;
      scavengeMs += entry.duration;
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  const start = process.cpuUsage();
  for (let i = 0; i < CASES; i++) {
    // One call per payload, as the SDK makes them.
    const sealed: Payload[] = [];
    for (const p of clear) sealed.push(...(await codec.encode([p])));
    for (const [j, bytes] of Object.values(opened).entries()) {
      const [back] = await codec.decode(sealed.slice(j, j + 1));
      if (back?.data?.length !== bytes) throw new Error('codec: a payload came back changed');
    }
  }
  const used = process.cpuUsage(start);
  // GC entries reach the observer a few turns of the event loop later (the loop above never yields to it).
  await setTimeout(100);
  gc.disconnect();
  const perCase = (used.user + used.system) / 1000 / CASES;
  const operations = Object.keys(all).length + Object.keys(opened).length;
  console.log(
    `codec: ${perCase.toFixed(4)} ms CPU per case (${operations} operations, ${((perCase * 1000) / operations).toFixed(2)} µs each) over ${CASES} cases; ${scavenges} scavenges (${((scavenges * 1000) / CASES).toFixed(1)} per 1000 cases, ${(scavengeMs / CASES).toFixed(4)} ms per case)`,
  );
}

/** A 'gc' entry's detail is untyped in @types/node: `{ kind, flags }`. */
function isScavenge(entry: PerformanceEntry): boolean {
  const detail: unknown = 'detail' in entry ? entry.detail : undefined;
  return (
    typeof detail === 'object' &&
    detail !== null &&
    'kind' in detail &&
    detail.kind === constants.NODE_PERFORMANCE_GC_MINOR
  );
}
