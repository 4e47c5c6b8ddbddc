import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { settingsPath } from '../../src/cli/client/settings.js';
import { FakeLlm, happyScript } from '../generation/fake-llm.js';
import { startTestService, type TestService } from '../support/harness.js';
import { newCaller } from '../support/keys.js';
import { cli, cliEnv, commandExamples, terminal, type CliRun } from './support.js';

const examplesDir = path.join(projectRoot, 'examples');
const classified = { category: 'billing', confidence: 0.9 };

/** Each example: how a person runs it, and the results it must print. */
const examples: Record<string, { name: string; runs: Array<{ args: string[]; results: Record<string, unknown> }> }> = {
  'hello-python.yaml': {
    name: 'Hello Python',
    runs: [{ args: ['--input', 'name=Ada'], results: { greeting: 'Hello, Ada!' } }],
  },
  'python-file.yaml': {
    name: 'Word count',
    runs: [{ args: ['--input', 'text=to be or not to be'], results: { words: 6, longest: 'not' } }],
  },
  'condition.yaml': {
    name: 'Approve large orders',
    runs: [
      { args: ['--input', 'amount=250'], results: { decision: 'review: 250.00 needs a second look' } },
      { args: ['--input', 'amount=50'], results: { decision: 'approved' } },
    ],
  },
  'catalog-code.yaml': {
    name: 'Double a count',
    runs: [{ args: ['--input', 'count=21'], results: { total: 42 } }],
  },
  'csv-file.yaml': {
    name: 'Sum a CSV',
    runs: [{ args: ['--file', 'orders=examples/data/orders.csv'], results: { rows: 3, total: 242.75 } }],
  },
  // The callee first: sub-workflow.yaml names it, and applying resolves the name.
  'shout.yaml': { name: 'Shout', runs: [{ args: ['--input', 'text=hi'], results: { loud: 'HI!' } }] },
  'sub-workflow.yaml': {
    name: 'Greet loudly',
    runs: [{ args: ['--input', 'name=Ada'], results: { greeting: 'HELLO, ADA!' } }],
  },
  'llm-agent.yaml': {
    name: 'Classify a ticket',
    runs: [{ args: ['--input', 'ticket=My invoice is late'], results: classified }],
  },
};

const noStack = (run: CliRun) => expect(run.stdout + run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
const json = (run: CliRun): unknown => JSON.parse(run.stdout);

describe('the caseflow CLI', () => {
  const llm = new FakeLlm();
  let svc: TestService;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    await llm.start();
    llm.script = happyScript((agent) => (agent === 'node_output' ? { json: classified } : undefined));
    svc = await startTestService({
      config: { llm: { baseUrl: llm.url, apiKey: 'sk-fake', model: 'fake-model', timeoutMs: 5000 } },
    });
    env = cliEnv(svc);
  });
  afterAll(async () => {
    await svc?.stop();
    await llm.stop();
  });

  it('applies and runs every example; applying again changes nothing', async () => {
    const files = readdirSync(examplesDir).filter((f) => /\.(ya?ml|json)$/.test(f));
    expect(files.sort()).toEqual([...Object.keys(examples), ...commandExamples].sort());
    for (const [file, example] of Object.entries(examples)) {
      const applied = await cli(['workflow', 'apply', '-f', `examples/${file}`, '--json'], env);
      expect(applied.code, applied.stderr).toBe(0);
      expect(json(applied)).toMatchObject({ action: 'created', versionNumber: 1, activeStatus: 'active' });
      const again = await cli(['workflow', 'apply', '-f', `examples/${file}`, '--json'], env);
      expect(json(again)).toMatchObject({ action: 'unchanged', versionNumber: 1 });
      for (const run of example.runs) {
        const ran = await cli(['case', 'run', example.name, ...run.args, '--wait', '--json'], env);
        expect(ran.code, `${file}: ${ran.stderr}${ran.stdout}`).toBe(0);
        const body = json(ran) as { status: string; results: Record<string, { value: unknown }> };
        expect(body.status).toBe('COMPLETED');
        const values = Object.fromEntries(Object.entries(body.results).map(([k, v]) => [k, v.value]));
        expect(values, file).toEqual(run.results);
      }
    }
  }, 300_000);

  it('exports a workflow as a file that applies back unchanged, and a changed file cuts one new version', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-export-'));
    const file = path.join(dir, 'exported.yaml');
    const exported = await cli(['workflow', 'export', 'Word count', '-o', file], env);
    expect(exported.code, exported.stderr).toBe(0);
    const same = await cli(['workflow', 'apply', '-f', file, '--json'], env);
    expect(json(same)).toMatchObject({ action: 'unchanged', versionNumber: 1 });
    const printed = await cli(['workflow', 'export', 'Word count'], env);
    expect(printed.stdout).toContain('python: |');
    writeFileSync(file, printed.stdout.replace('len(words)', 'len(words) * 1'));
    const changed = await cli(['workflow', 'apply', '-f', file, '--json'], env);
    expect(json(changed)).toMatchObject({ action: 'updated', versionNumber: 2 });
    expect(json(await cli(['workflow', 'apply', '-f', file, '--json'], env))).toMatchObject({
      action: 'unchanged',
      versionNumber: 2,
    });
    const listed = await cli(['workflow', 'list'], env);
    expect(listed.stdout).toMatch(/v2\s+active\s+Word count/);
    // A catalog code node is exported by its ids (no GET reads its source) and applies back unchanged; a changed
    // source beside the file cuts a new version of that code node and of the workflow.
    const code = path.join(dir, 'catalog-code.yaml');
    expect((await cli(['workflow', 'export', 'Double a count', '-o', code], env)).code).toBe(0);
    expect(json(await cli(['workflow', 'apply', '-f', code, '--json'], env))).toMatchObject({ action: 'unchanged' });
    const source = readFileSync(path.join(examplesDir, 'catalog-code.yaml'), 'utf8');
    writeFileSync(code, source);
    writeFileSync(path.join(dir, 'double.py'), 'def main(inputs):\n    return {"total": inputs["count"] * 3}\n');
    expect(json(await cli(['workflow', 'apply', '-f', code, '--json'], env))).toMatchObject({
      action: 'updated',
      versionNumber: 2,
    });
    expect(json(await cli(['workflow', 'apply', '-f', code, '--json'], env))).toMatchObject({ action: 'unchanged' });
    const tripled = await cli(['case', 'run', 'Double a count', '--input', 'count=5', '--wait', '--json'], env);
    expect((json(tripled) as { results: { total: { value: unknown } } }).results.total.value).toBe(15);
    // A sub-workflow's callee is written by name, so the file applies in another workspace where that name exists.
    const caller = await cli(['workflow', 'export', 'Greet loudly'], env);
    expect(caller.stdout).toContain('    call: Shout\n');
  }, 120_000);

  it('shows each node as it runs and the results on a terminal (case run --wait)', async () => {
    const screen = await terminal(['case', 'run', 'Hello Python', '--input', 'name=Grace', '--wait'], env);
    expect(screen.code, screen.stdout).toBe(0);
    const text = screen.stdout.replaceAll('\r', '');
    expect(text).toMatch(/case [0-9a-f-]{36} started: Hello Python, version 1/);
    expect(text).toMatch(/▶ greet\n/);
    expect(text).toMatch(/✓ greet \(\d+\.\d s\)\n/);
    expect(text).toContain('COMPLETED\nresults:\n  greeting = Hello, Grace!\n');
    const caseId = /case ([0-9a-f-]{36}) started/.exec(text)?.[1] ?? '';
    const ui = await cli(['case', 'ui'], env);
    expect(ui.stdout.trim()).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/case-${caseId}`);
    const status = await cli(['case', 'status', caseId], env);
    expect(status.stdout).toContain(`${caseId}  COMPLETED`);
  });

  it('draws a progress bar from the run’s progress on a terminal (generate --wait)', async () => {
    const screen = await terminal(
      ['generate', 'Route invoices: clean the vendor, if the amount is over 1000 ask for approval', '--wait'],
      env,
    );
    expect(screen.code, screen.stdout).toBe(0);
    // Redrawn in place: carriage return and erase-line before each state of the bar.
    expect(screen.stdout).toContain('\r\x1b[2K[');
    expect(screen.stdout).toContain(`[${'#'.repeat(30)}] 100%`);
    expect(screen.stdout).toMatch(/\ncompleted: /);
  });

  it('prints the service’s message and fields, never a stack trace, with the documented exit codes', async () => {
    const missing = await cli(['case', 'run', 'Hello Python', '--wait'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^caseflow: .+\(HTTP 400\)\n {2}body\.inputs\.name: /);
    noStack(missing);
    const notNumber = await cli(['case', 'run', 'Approve large orders', '--input', 'amount=lots'], env);
    expect(notNumber).toMatchObject({ code: 1, stderr: 'caseflow: --input amount: "lots" is not a number\n' });
    const unknown = await cli(['case', 'run', 'No such workflow'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no workflow named "No such workflow"');
    const badKey = await cli(['workflow', 'list'], { ...env, CASEFLOW_API_KEY: 'cf_nope' });
    expect(badKey.code).toBe(3);
    noStack(badKey);
    const usage = await cli(['case', 'run', 'Hello Python', '--nope'], env);
    expect(usage.code).toBe(2);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-bad-'));
    writeFileSync(
      path.join(dir, 'bad.yaml'),
      'name: Bad\nnodes:\n  a:\n    python_file: missing.py\n    inputs: { x: input.nope }\n',
    );
    const bad = await cli(['workflow', 'apply', '-f', path.join(dir, 'bad.yaml'), '--json'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('nodes.a.python_file: cannot read missing.py');
    expect(bad.stderr).toContain('nodes.a.inputs.x: "input.nope": node "input" has no output "nope"');
    expect((json(bad) as { error: { details: string[] } }).error.details).toHaveLength(2);
    noStack(bad);
  });

  it('login checks the key and keeps it in a file only its owner reads', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'caseflow-login-'));
    const userEnv = { PATH: process.env.PATH, HOME: home };
    const refused = await cli(['login', '--url', svc.url, '--key', 'cf_wrong'], userEnv);
    expect(refused.code).toBe(3);
    const login = await cli(['login', '--url', svc.url, '--key', svc.key], userEnv);
    expect(login.code, login.stderr).toBe(0);
    const file = settingsPath({ HOME: home });
    expect(file.startsWith(home)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const listed = await cli(['workflow', 'list', '--json'], userEnv);
    expect(listed.code, listed.stderr).toBe(0);
    expect((json(listed) as Array<{ name: string }>).map((w) => w.name)).toContain('Hello Python');
  });

  it('another organization’s key finds none of these workflows or cases', async () => {
    const run = await cli(['case', 'run', 'Hello Python', '--input', 'name=Eve', '--wait', '--json'], env);
    const { caseId } = json(run) as { caseId: string };
    const other = await newCaller(svc, ['workflow:full', 'case:full'], { verified: false });
    const theirs = { ...env, CASEFLOW_API_KEY: other.key };
    const byName = await cli(['case', 'run', 'Hello Python', '--input', 'name=Eve'], theirs);
    expect(byName.stderr).toContain('no workflow named "Hello Python"');
    // A file naming this organization's workflow as its callee does not resolve it in theirs.
    const callee = await cli(['workflow', 'apply', '-f', 'examples/sub-workflow.yaml'], theirs);
    expect(callee).toMatchObject({ code: 1, stdout: '' });
    expect(callee.stderr).toContain('nodes.shout.call: no workflow named "Shout" in the workspace');
    for (const args of [
      ['case', 'status', caseId],
      ['case', 'results', caseId],
      ['case', 'cancel', caseId],
    ]) {
      const answer = await cli(args, theirs);
      expect(answer.code, args.join(' ')).toBe(1);
      expect(answer.stderr).toContain('(HTTP 404)');
    }
  });
});
