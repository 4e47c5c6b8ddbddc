import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Outbound } from '../src/net/outbound.js';
import { percentile } from './bench-stats.js';

const REQUESTS = Number(process.env.BENCH_OUTBOUND_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_OUTBOUND_CONCURRENCY ?? 8);
const BLOCKS = Number(process.env.BENCH_OUTBOUND_BLOCKS ?? 6);
/** Another checkout whose build runs in turn with this one (its dist/src/net/outbound.js). */
const AGAINST = process.env.BENCH_OUTBOUND_AGAINST;

/** A callback's POST: a case's results signed the Standard Webhooks way (the values are stand-ins). */
const body = JSON.stringify({
  caseId: 'c'.repeat(36),
  status: 'COMPLETED',
  results: { sum: { value: 3, type: 'int' } },
});
const headers = {
  'content-type': 'application/json',
  'user-agent': 'caseflow-webhooks/1',
  'webhook-id': 'd'.repeat(36),
  'webhook-timestamp': '1790000000',
  'webhook-signature': `v1,${'s'.repeat(44)}`,
};

/** The receiver runs in a child process, so this process's CPU is the client's alone. */
const receiverSource = `
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function startReceiver(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['-e', receiverSource], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = (await once(child.stdout, 'data')) as [Buffer];
  return { child, url: `http://127.0.0.1:${port.toString().trim()}/hook` };
}

/** CPU of this process per request (ms), REQUESTS POSTs at CONCURRENCY at once. */
async function block(outbound: Outbound, url: string): Promise<number> {
  let next = 0;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next += 1;
        const answer = await outbound.request(url, {
          method: 'POST',
          body,
          headers,
          timeoutMs: 10_000,
          maxResponseBytes: 1024,
        });
        if (answer.status !== 200) throw new Error(`the receiver answered ${answer.status}`);
      }
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / REQUESTS;
}

/**
 * `npm run bench -- outbound`: CPU per callback-shaped POST through the outbound policy (the check, the pinned
 * keep-alive socket, the answer read) on this thread, against a receiver in a child process. With
 * BENCH_OUTBOUND_AGAINST=<dir>, that checkout's build runs in the same process, a block of each in turn (the
 * order swapped every other round), and each round prints the ratio of this build to it.
 */
export async function benchOutbound(): Promise<void> {
  const receiver = await startReceiver();
  try {
    const subjects = [{ name: 'this build', outbound: new Outbound({ allowCidrs: '127.0.0.1/32' }) }];
    if (AGAINST) {
      const other = (await import(pathToFileURL(path.resolve(AGAINST, 'dist/src/net/outbound.js')).href)) as {
        Outbound: typeof Outbound;
      };
      subjects.push({ name: AGAINST, outbound: new other.Outbound({ allowCidrs: '127.0.0.1/32' }) });
    }
    // Warm-up, not counted: V8's compilations and the first sockets.
    for (const subject of subjects) await block(subject.outbound, receiver.url);
    const ratios: number[] = [];
    for (let round = 0; round < BLOCKS; round++) {
      const order = round % 2 === 0 ? subjects : [...subjects].reverse();
      const measured = new Map<(typeof subjects)[number], number>();
      for (const subject of order) measured.set(subject, await block(subject.outbound, receiver.url));
      const [ours = 0, theirs] = subjects.map((subject) => measured.get(subject) ?? 0);
      const figures = subjects
        .map((subject) => `${subject.name} ${(measured.get(subject) ?? 0).toFixed(3)}`)
        .join(', ');
      if (theirs !== undefined) ratios.push(ours / theirs);
      const ratio = theirs !== undefined ? `; ratio ${(ours / theirs).toFixed(2)}×` : '';
      console.log(`outbound round ${round + 1}: ms CPU per request: ${figures}${ratio}`);
    }
    const sorted = [...ratios].sort((a, b) => a - b);
    if (AGAINST && sorted.length > 0)
      console.log(
        `outbound: this build / ${AGAINST}: median ${percentile(sorted, 50).toFixed(2)}× (${(sorted[0] ?? 0).toFixed(2)}-${(sorted.at(-1) ?? 0).toFixed(2)}), ${REQUESTS} requests per block at concurrency ${CONCURRENCY}`,
      );
  } finally {
    receiver.child.kill();
  }
}
