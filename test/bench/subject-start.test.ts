import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { freePort } from '../../src/net/free-port.js';
import { startCaseflow } from '../../scripts/bench-subjects.js';

/** Ports the bench's next freePort() calls get, ahead of free ones. */
const chosen = vi.hoisted(() => ({ ports: [] as number[] }));
vi.mock('../../src/net/free-port.js', async (importActual) => {
  const actual = await importActual<typeof import('../../src/net/free-port.js')>();
  return { freePort: () => Promise.resolve(chosen.ports.shift()).then((port) => port ?? actual.freePort()) };
});

let dataDir: string | undefined;
let impostor: Server | undefined;

/** The processes whose environment names `dir` as their data directory: the service and what it started. */
function processesOn(dir: string): Array<{ pid: number; cmdline: string }> {
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`CASEFLOW_DATA_DIR=${dir}`)) continue;
      found.push({ pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

afterEach(() => {
  impostor?.close();
  impostor = undefined;
  if (!dataDir) return;
  // What this test's subject left behind, without the fix: its own processes, ended by pid.
  for (const { pid } of processesOn(dataDir)) process.kill(pid, 'SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

it('stops every process of a caseflow subject that fails to start, the dev server it was starting included', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-subject-start-'));
  dataDir = dir;
  // The incident: another process on the port the bench chose for the service (another bench's Temporal UI)
  // answers its readiness probe while the service is still starting its dev server, then its first API call with a
  // gRPC-style 404.
  const port = await freePort();
  impostor = createServer((req, res) => {
    const devServerUp = processesOn(dir).some((p) => p.cmdline.includes('start-dev'));
    const ready = req.url === '/readyz' && devServerUp;
    res.writeHead(ready ? 200 : req.url === '/readyz' ? 503 : 404, { 'content-type': 'application/json' });
    res.end(ready ? '{}' : '{"code":5,"message":"Not Found"}');
  }).listen(port, '127.0.0.1');
  chosen.ports.push(port);

  // The build in this checkout's dist/ (`npx tsc -p tsconfig.build.json`), as `npm run bench` runs it.
  const start = startCaseflow(path.join(projectRoot, 'dist'), { CASEFLOW_DATA_DIR: dir });
  await expect(start).rejects.toThrow('GET /api/v1/me → 404 {"code":5,"message":"Not Found"}');

  // SIGKILLed processes take a moment to leave /proc; one left running stays.
  for (let i = 0; i < 50 && processesOn(dir).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  expect(processesOn(dir)).toEqual([]);
});
