import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { projectRoot } from '../../src/config/paths.js';
import { secretOf } from '../support/keys.js';

const run = promisify(execFile);

describe('configuration', () => {
  it('takes defaults from config/ and overrides from the environment', () => {
    const config = loadConfig({ PORT: '9999', TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS: 'true' });
    expect(config.port).toBe(9999);
    expect(config.temporal.address).toBe('temporal.internal:7233');
    expect(config.temporal.tls).toBe(true);
    expect(config.temporal.taskQueue).toBe('caseflow');
    expect(path.isAbsolute(config.dataDir)).toBe(true);
  });

  it('names every bad value and where it came from', () => {
    try {
      loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', CASEFLOW_ADMIN_TOKEN: 'short' });
      expect.unreachable('config should be rejected');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).toContain('port (from PORT)');
      expect(message).toContain('logLevel (from LOG_LEVEL)');
      expect(message).toContain('databaseUrl (from DATABASE_URL)');
      expect(message).toContain('adminToken (from CASEFLOW_ADMIN_TOKEN)');
    }
  });

  it("reads the sandbox's bwrap path from CASEFLOW_PYTHON_BWRAP_PATH, only as an absolute path", () => {
    expect(loadConfig({}).python.bwrapPath).toBe('/usr/bin/bwrap');
    expect(loadConfig({ CASEFLOW_PYTHON_BWRAP_PATH: '/opt/bwrap/bin/bwrap' }).python.bwrapPath).toBe(
      '/opt/bwrap/bin/bwrap',
    );
    expect(() => loadConfig({ CASEFLOW_PYTHON_BWRAP_PATH: 'bin/bwrap' })).toThrow(
      'python.bwrapPath (from CASEFLOW_PYTHON_BWRAP_PATH): an absolute path',
    );
  });
});

describe('operator CLI', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-cli-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  /** Runs the built CLI; its stdout is JSON, read as the shape the caller names. */
  async function cli<T = unknown>(...args: string[]): Promise<T> {
    const { stdout } = await run('node', [path.join(projectRoot, 'dist/src/cli/main.js'), ...args], {
      env: { ...process.env, CASEFLOW_DATA_DIR: dataDir },
    });
    return (stdout.trim() ? JSON.parse(stdout) : undefined) as T;
  }

  it('creates and lists organizations, workspaces, users and keys, verifies, revokes and removes members', async () => {
    const org = await cli<{ id: string; verified: boolean }>('org', 'create', 'Acme');
    expect(org.verified).toBe(false);
    await cli('org', 'verify', org.id);
    expect(
      (await cli<Array<{ id: string; verified: boolean }>>('org', 'list')).find((o) => o.id === org.id)?.verified,
    ).toBe(true);
    const ws = await cli<{ id: string }>('workspace', 'create', org.id, 'Ops');
    const user = await cli<{ id: string }>('user', 'create', 'ops@example.com', 'Ops', '--org', org.id);
    const created = await cli<{ key: string; apiKey: { id: string; grants: string[] } }>(
      'key',
      'create',
      '--org',
      org.id,
      '--user',
      user.id,
      '--name',
      'ci',
      '--grants',
      'case:full,file:read',
      '--workspaces',
      ws.id,
      '--expires-in-days',
      '30',
    );
    expect(created.key).toMatch(/^cf_/);
    expect(created.apiKey.grants).toEqual(['case:full', 'file:read']);
    const keys = await cli<Array<{ id: string }>>('key', 'list', org.id);
    expect(JSON.stringify(keys)).not.toContain(secretOf(created.key));
    await cli('key', 'revoke', created.apiKey.id);
    expect((await cli<Array<{ revokedAt: string | null }>>('key', 'list', org.id))[0]?.revokedAt).not.toBeNull();
    await cli('member', 'remove', org.id, user.id);
    expect(await cli('user', 'list', '--org', org.id)).toEqual([]);
  }, 180_000); // thirteen CLI processes, each opening the store: slow on a loaded 2-core machine

  it('exits non-zero with a clear message on bad input', async () => {
    await expect(
      cli('key', 'create', '--org', 'nope', '--user', 'nope', '--name', 'x', '--grants', 'root'),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining('unknown grant'),
    });
    await expect(cli('workspace', 'list', '00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      stderr: expect.stringContaining('does not exist'),
    });
  });
});
