import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { freePort } from '../../src/net/free-port.js';
import { startTestService, type TestService } from '../support/harness.js';
import { cli, cliEnv, type CliRun } from './support.js';

const json = (run: CliRun): unknown => JSON.parse(run.stdout);

/** examples/echo-server.mjs started as its header says; resolves once it listens. */
async function startEcho(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(projectRoot, 'examples/echo-server.mjs'), String(port)]);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`echo server exited (${code})`)));
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) resolve();
    });
  });
  return child;
}

/**
 * examples/integration-action.yaml, as its header comments say: the operator allows the one echo service by host:port
 * (no CIDR allows loopback here), an integration is authored and connected through the CLI, the workflow names the
 * connection and action, and its case reaches the echo service; the same action pointed at another loopback port is
 * refused by the outbound policy.
 */
describe('integration-action.yaml against a local echo service', () => {
  let svc: TestService;
  let env: NodeJS.ProcessEnv;
  let echo: ChildProcess;
  let echoPort: number;

  beforeAll(async () => {
    echoPort = await freePort();
    echo = await startEcho(echoPort);
    svc = await startTestService({
      config: { outbound: { allowCidrs: '', allowTargets: `127.0.0.1:${echoPort}` } },
    });
    env = cliEnv(svc);
  });
  afterAll(async () => {
    await svc?.stop();
    echo?.kill();
  });

  const ok = async (args: string[]) => {
    const run = await cli([...args, '--json'], env);
    expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    return json(run);
  };

  it('authors, connects, applies and runs it; another loopback port is refused', async () => {
    const created = (await ok(['integration', 'create', '-f', 'examples/integrations/echo.json'])) as {
      createdActions: Array<{ name: string }>;
    };
    expect(created.createdActions.map((a) => a.name)).toEqual(['Echo']);
    const url = `http://127.0.0.1:${echoPort}`;
    await ok(['connection', 'create', 'Echo service', '--name', 'echo', '--action', 'Echo', '--data', `url=${url}`]);
    expect(await ok(['workflow', 'apply', '-f', 'examples/integration-action.yaml'])).toMatchObject({
      action: 'created',
    });
    const ran = (await ok(['case', 'run', 'Echo a message', '--input', 'message=hello', '--wait'])) as {
      status: string;
      results: Record<string, { value: unknown }>;
    };
    expect(ran.status).toBe('COMPLETED');
    expect(ran.results.echoed?.value).toBe('hello');

    // The service's own API port, on the same loopback address: not named, so refused.
    await ok(['connection', 'create', 'Echo service', '--name', 'api', '--action', 'Echo', '--data', `url=${svc.url}`]);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-echo-'));
    const file = path.join(dir, 'elsewhere.yaml');
    const example = readFileSync(path.join(projectRoot, 'examples/integration-action.yaml'), 'utf8');
    writeFileSync(
      file,
      example.replace('connection: echo', 'connection: api').replace('name: Echo a message', 'name: Echo the API'),
    );
    await ok(['workflow', 'apply', '-f', file]);
    const refused = await cli(['case', 'run', 'Echo the API', '--input', 'message=hello', '--wait'], env);
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stdout).toMatch(/✗ echo .*refused by the caseflow outbound policy: 127\.0\.0\.1 is/);
  }, 180_000);
});
