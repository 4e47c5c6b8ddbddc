import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { printBootstrapKey } from '../../src/cli/bootstrap-banner.js';
import { startTestService, type TestService } from '../support/harness.js';
import { cli } from '../cli/support.js';
import { fencedBlocks } from './fences.js';

const prefix = 'npm run -s caseflow -- ';
const keyPlaceholder = '<the key the first start printed>';

/** A command line split as a shell would for the quoting the README uses (double quotes). */
function words(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '');
}

describe('README quickstart, as written', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => {
    await svc?.stop();
  });

  it('the first-start banner prints the login line with the key filled in', () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      printBootstrapKey(svc.bootstrap!);
      const banner = write.mock.calls.map((c) => String(c[0])).join('');
      const [login] = fencedBlocks('README.md', 'sh', '## Quickstart')[0]?.split('\n') ?? [];
      expect(banner).toContain(login?.replace(keyPlaceholder, svc.key));
      expect(banner).toContain('"Quickstart"');
    } finally {
      write.mockRestore();
    }
  });

  it('three commands give a completed Python case with its results, a fourth the Temporal UI link', async () => {
    const lines = fencedBlocks('README.md', 'sh', '## Quickstart')
      .join('')
      .split('\n')
      .filter((l) => l.trim());
    expect(lines.length).toBe(4);
    // A newcomer's machine: no config file yet, the service where npm start put it (here: the test's port).
    const env = {
      PATH: process.env.PATH,
      HOME: mkdtempSync(path.join(os.tmpdir(), 'quickstart-')),
      CASEFLOW_URL: svc.url,
    };
    const outputs: string[] = [];
    for (const line of lines) {
      expect(line.startsWith(prefix)).toBe(true);
      const run = await cli(words(line.slice(prefix.length).replace(keyPlaceholder, svc.key)), env);
      expect(run.code, `${line}\n${run.stderr}`).toBe(0);
      outputs.push(run.stdout);
    }
    expect(outputs[2]).toMatch(/▶ greet\n.*✓ greet/s);
    expect(outputs[2]).toContain('COMPLETED\nresults:\n  greeting = Hello, Ada!\n');
    const caseId = /case ([0-9a-f-]{36}) started/.exec(outputs[2] ?? '')?.[1];
    expect(outputs[3]?.trim()).toBe(`http://127.0.0.1:8233/namespaces/default/workflows/case-${caseId ?? ''}`);
  }, 120_000);
});
