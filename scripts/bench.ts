import { benchPython } from './bench-python.js';
import { benchCases } from './bench-cases.js';
import { benchCodec } from './bench-codec.js';
import { benchOutbound } from './bench-outbound.js';
import { benchE2e, benchSideBySide } from './bench-e2e.js';
import { benchFairness } from './bench-fairness.js';
import { benchReplay } from './bench-replay.js';

/**
 * `npm run bench`: the figures the issues name, printed, never asserted.
 * Pass names to run a subset: `npm run bench -- python`.
 */
const benches: Record<string, () => Promise<void>> = {
  python: benchPython,
  cases: benchCases,
  codec: benchCodec,
  outbound: benchOutbound,
  replay: benchReplay,
  e2e: benchE2e,
  'side-by-side': benchSideBySide,
  fairness: benchFairness,
};
/** Run only when named: side-by-side repeats e2e and needs n8n installed; fairness takes several minutes per variant. */
const onRequest = new Set(['side-by-side', 'fairness']);

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!benches[name]) {
    console.error(`unknown bench "${name}"; choose from: ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
}
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length > 0 ? !wanted.includes(name) : onRequest.has(name)) continue;
  console.log(`\n== ${name} ==`);
  await run();
}
