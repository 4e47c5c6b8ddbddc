import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { freePort } from '../../src/net/free-port.js';
import { searchAttributes } from '../../src/temporal/contracts/search-attributes.js';
import { startDevServer, type DevServer } from '../../src/temporal/dev-server.js';
import { headlessDevServer } from '../support/dev-server.js';

/** A process's argv or environment as /proc holds it (NUL-separated). */
const procList = (pid: number, file: 'cmdline' | 'environ') => readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');

/** The values following each occurrence of `flag` in an argv. */
const flagValues = (argv: string[], flag: string) => argv.flatMap((arg, i) => (arg === flag ? [argv[i + 1]] : []));

describe('the embedded Temporal dev server tuning (docs/performance.md)', () => {
  it('reads dynamic config, SQLite pragmas and GOGC from the environment', () => {
    const config = loadConfig({
      TEMPORAL_DEV_DYNAMIC_CONFIG:
        'history.visibilityProcessorMaxPollRPS=2,frontend.enableUpdateWorkflowExecution=true',
      TEMPORAL_DEV_SQLITE_PRAGMAS: 'cache_size=-16384,temp_store=memory',
      TEMPORAL_DEV_GOGC: '300',
      TEMPORAL_DEV_METRICS_PORT: '9091',
    });
    // Merged over config/default.json's: a variable naming one setting keeps the others.
    expect(config.temporal.devServer.dynamicConfig).toEqual({
      ...loadConfig({}).temporal.devServer.dynamicConfig,
      'history.visibilityProcessorMaxPollRPS': 2,
      'frontend.enableUpdateWorkflowExecution': true,
    });
    expect(config.temporal.devServer.dynamicConfig).toHaveProperty(
      'system.forceSearchAttributesCacheRefreshOnRead',
      false,
    );
    expect(config.temporal.devServer.sqlitePragmas).toEqual({ cache_size: -16384, temp_store: 'memory' });
    expect(config.temporal.devServer.goGc).toBe(300);
    // Unset, the embedded server collects at half of Go's default growth (docs/performance.md, "Twelfth round").
    expect(loadConfig({}).temporal.devServer.goGc).toBe(50);
    expect(config.temporal.devServer.metricsPort).toBe(9091);
  });

  it("starts the test run's shared server with the engine's defaults, as the service starts its own", () => {
    const pid = inject('temporalPid');
    const defaults = loadConfig({}).temporal.devServer;
    const dynamic = flagValues(procList(pid, 'cmdline'), '--dynamic-config-value');
    for (const [key, value] of Object.entries(defaults.dynamicConfig))
      expect(dynamic).toContain(`${key}=${JSON.stringify(value)}`);
    expect(dynamic).toContain('matching.enableFairness=true');
    expect(procList(pid, 'environ')).toContain(`GOGC=${defaults.goGc}`);
  });

  it('refuses to change the durability pragmas or a malformed pair, naming the variable', () => {
    for (const value of ['synchronous=off', 'journal_mode=memory', 'cache_size']) {
      expect(() => loadConfig({ TEMPORAL_DEV_SQLITE_PRAGMAS: value })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ TEMPORAL_DEV_SQLITE_PRAGMAS: 'synchronous=off' })).toThrow(/TEMPORAL_DEV_SQLITE_PRAGMAS/);
    expect(() => loadConfig({ TEMPORAL_DEV_DYNAMIC_CONFIG: 'not a key=1' })).toThrow(/TEMPORAL_DEV_DYNAMIC_CONFIG/);
  });

  it('reads an object value from the environment, splitting pairs only at commas outside braces and strings', () => {
    const { dynamicConfig } = loadConfig({
      TEMPORAL_DEV_DYNAMIC_CONFIG:
        'history.cacheBackgroundEvict={"Enabled":true, "LoopInterval":"10s","MaxEntryPerCall":64},history.cacheTTL="1m", frontend.example="a,{b"',
    }).temporal.devServer;
    expect(dynamicConfig['history.cacheBackgroundEvict']).toEqual({
      Enabled: true,
      LoopInterval: '10s',
      MaxEntryPerCall: 64,
    });
    expect(dynamicConfig['history.cacheTTL']).toBe('1m');
    expect(dynamicConfig['frontend.example']).toBe('a,{b');
    expect(dynamicConfig['history.visibilityProcessorMaxPollRPS']).toBe(2);
  });

  it('refuses a dynamic config value that is not a scalar or a flat object of scalars', () => {
    for (const value of [
      'history.cacheBackgroundEvict={"Enabled":true,"LoopInterval":"10s"',
      'history.cacheBackgroundEvict={"Enabled":{"on":true}}',
      'history.cacheBackgroundEvict={"Loop Interval":"10s"}',
      'history.cacheTTL="1m',
      'history.example=[1,2]',
    ]) {
      expect(() => loadConfig({ TEMPORAL_DEV_DYNAMIC_CONFIG: value }), value).toThrow(/TEMPORAL_DEV_DYNAMIC_CONFIG/);
    }
    const nested = { temporal: { devServer: { dynamicConfig: { 'history.example': { a: [1] } } } } };
    expect(() => loadConfig({}, nested)).toThrow(/dynamicConfig\.history\.example/);
  });

  describe('a server started with them', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'caseflow-dev-flags-'));
    const defaults = loadConfig({}).temporal.devServer;
    const evict = defaults.dynamicConfig['history.cacheBackgroundEvict'];
    if (typeof evict !== 'object') throw new Error('config/default.json: history.cacheBackgroundEvict is an object');
    // The defaults with the history cache's TTL and eviction loop short enough to watch within a test.
    const overrides = {
      'history.visibilityProcessorMaxPollRPS': 3,
      'history.cacheTTL': '3s',
      'history.cacheBackgroundEvict': { ...evict, LoopInterval: '1s' },
    };
    let server: DevServer;
    let metricsPort: number;
    beforeAll(async () => {
      metricsPort = await freePort();
      server = await startDevServer({
        ...(await headlessDevServer(dataDir)),
        dynamicConfig: { ...defaults.dynamicConfig, ...overrides },
        sqlitePragmas: { ...defaults.sqlitePragmas, cache_size: -8192 },
        goGc: 250,
        metricsPort,
      });
    }, 120_000);
    afterAll(async () => {
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('passes each as a flag (durability pragmas first and fixed) and GOGC in its environment, and answers', () => {
      const argv = procList(server.pid, 'cmdline');
      const pragmas = flagValues(argv, '--sqlite-pragma');
      expect(pragmas.slice(0, 2)).toEqual(['journal_mode=wal', 'synchronous=normal']);
      expect(pragmas).toContain('cache_size=-8192');
      for (const [name, value] of Object.entries(defaults.sqlitePragmas)) {
        if (name !== 'cache_size') expect(pragmas).toContain(`${name}=${value}`);
      }
      const dynamic = flagValues(argv, '--dynamic-config-value');
      expect(dynamic).toContain('history.visibilityProcessorMaxPollRPS=3');
      expect(dynamic).toContain('history.cacheTTL="3s"');
      expect(dynamic).toContain(
        'history.cacheBackgroundEvict={"Enabled":true,"LoopInterval":"1s","MaxEntryPerCall":1024}',
      );
      for (const [key, value] of Object.entries(defaults.dynamicConfig)) {
        if (!(key in overrides)) expect(dynamic).toContain(`${key}=${JSON.stringify(value)}`);
      }
      expect(procList(server.pid, 'environ')).toContain('GOGC=250');
      expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    });

    it('serves its own metrics on the port given (what the e2e bench reads per level)', async () => {
      const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
      expect(text).toMatch(/^# TYPE \w+ (counter|gauge|histogram)/m);
    });

    it('reads search attributes and the namespace from its caches, not from SQLite on each tagged start', async () => {
      // The dev server forces both reads through to the database on every use unless told not to (docs/performance.md).
      const reads = async () => {
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
        const series = (operation: string) =>
          [...text.matchAll(new RegExp(`^persistence_requests\\{[^}]*operation="${operation}"[^}]*\\} (\\S+)$`, 'gm'))]
            .map((m) => Number(m[1]))
            .reduce((a, b) => a + b, 0);
        return series('GetCurrentClusterMetadata') + series('GetNamespace');
      };
      const connection = await Connection.connect({ address: server.address });
      try {
        const client = new Client({ connection });
        const start = (i: number) =>
          client.workflow.start('untouched', {
            taskQueue: 'nobody-polls',
            workflowId: `tagged-${i}`,
            typedSearchAttributes: [{ key: searchAttributes.organizationId, value: 'org' }],
          });
        // The caches fill on first use; the server publishes its counters every second or so.
        const published = () => new Promise((resolve) => setTimeout(resolve, 2500));
        await start(0);
        await published();
        const before = await reads();
        for (let i = 1; i <= 20; i++) await start(i);
        await published();
        // Forced through, each start alone read both several times (the visibility writes that follow too).
        expect((await reads()) - before).toBeLessThan(5);
        // And the runs' visibility rows carry the attribute: the UI's filters still find them.
        let listed = 0;
        for (let i = 0; i < 50 && listed < 21; i++) {
          listed = (await client.workflow.count(`${searchAttributes.organizationId.name} = 'org'`)).count;
          if (listed < 21) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(listed).toBe(21);
      } finally {
        await connection.close();
      }
    }, 60_000);

    it('lets go of runs idle for history.cacheTTL (the background eviction the object value turns on)', async () => {
      // The server ignores a value it cannot read as the struct (logging a warning the embedded server's level hides):
      // without eviction, these runs and the system workflows' stay cached for the default hour.
      const cached = async () => {
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
        const match = /^cache_usage\{[^}]*cache_type="mutablestate"[^}]*\} (\S+)$/m.exec(text);
        return match ? Number(match[1]) : undefined;
      };
      const connection = await Connection.connect({ address: server.address });
      try {
        const client = new Client({ connection });
        for (let i = 0; i < 5; i++) {
          const handle = await client.workflow.start('untouched', {
            taskQueue: 'nobody-polls',
            workflowId: `idle-${i}`,
          });
          await handle.terminate();
        }
      } finally {
        await connection.close();
      }
      // Published every second or so: first the entries the starts put, then none once they have expired.
      const reaches = async (expected: (count: number) => boolean) => {
        for (let i = 0; i < 40; i++) {
          const count = await cached();
          if (count !== undefined && expected(count)) return true;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        return false;
      };
      expect(await reaches((count) => count > 0)).toBe(true);
      expect(await reaches((count) => count === 0)).toBe(true);
    }, 60_000);

    it('runs its history task schedulers with few workers (512 each by default start ~2,300 goroutines)', async () => {
      // The runtime reporter publishes its gauges (one series per service of the process) a few seconds after start.
      let goroutines = 0;
      for (let i = 0; i < 30 && goroutines === 0; i++) {
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text());
        const values = [...text.matchAll(/^num_goroutines\{[^}]*\} (\S+)$/gm)].map((m) => Number(m[1]));
        goroutines = Math.max(0, ...values);
        if (goroutines === 0) await new Promise((r) => setTimeout(r, 1000));
      }
      expect(goroutines).toBeGreaterThan(0);
      expect(goroutines).toBeLessThan(1000);
    }, 60_000);
  });
});
