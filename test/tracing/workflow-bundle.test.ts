import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/config/paths.js';
import { workflowBundlePath } from '../../src/temporal/worker.js';
import { preloadedWorkflowModules } from '../../src/temporal/workflow-preload.js';

interface BundleHooks {
  preloadModules(): void;
  importInterceptors(): unknown;
  importWorkflows(): unknown;
}

/**
 * The modules the prebuilt bundle evaluates for one run, as the SDK's reused V8 context does it: what the bundle
 * loads before the first run is shared (its module cache routes through `globalThis.__webpack_module_cache__`),
 * its preloaded modules among them; every module required after belongs to that run and is evaluated again for
 * the next one. `preloaded` lists what the preload added to the shared ones.
 */
function bundleModules(step: (temporal: BundleHooks) => void) {
  const shared = new Map<string | symbol, unknown>();
  const run = new Map<string | symbol, unknown>();
  let running = false;
  const cache = new Proxy(
    {},
    {
      get: (_, id) => shared.get(id) ?? run.get(id),
      set: (_, id, module) => {
        (running ? run : shared).set(id, module);
        return true;
      },
    },
  );
  const context = vm.createContext({ console, TextEncoder, TextDecoder });
  Object.defineProperty(context, '__webpack_module_cache__', { value: cache });
  new vm.Script(readFileSync(workflowBundlePath, 'utf8')).runInContext(context);
  const temporal = vm.runInContext('__TEMPORAL__', context) as BundleHooks;
  const loaded = new Set(shared.keys());
  temporal.preloadModules();
  running = true;
  step(temporal);
  return {
    perRun: [...run.keys()].map(String),
    preloaded: [...shared.keys()].filter((id) => !loaded.has(id)).map(String),
  };
}

/** Our modules among webpack's ids (`./dist/…`, relative to the project, where the build runs). */
const ours = (ids: string[]) => ids.filter((id) => id.startsWith('./dist/')).sort();

describe('the workflow bundle, per run', () => {
  it('evaluates none of OpenTelemetry for a run that is not traced (the interceptors require it when one is)', () => {
    const { perRun: interceptors } = bundleModules((temporal) => temporal.importInterceptors());
    const { perRun: workflows } = bundleModules((temporal) => temporal.importWorkflows());
    expect([...interceptors, ...workflows].filter((id) => id.includes('opentelemetry'))).toEqual([]);
  });

  it('evaluates none of our modules: the workflows, what they import and the interceptors are preloaded', () => {
    const { perRun } = bundleModules((temporal) => {
      temporal.importInterceptors();
      temporal.importWorkflows();
    });
    expect(ours(perRun)).toEqual([]);
  });

  it('shares only the modules of ours that are listed as keeping nothing of a run', () => {
    const { preloaded } = bundleModules(() => undefined);
    const listed = preloadedWorkflowModules.map((file) => `./${path.relative(projectRoot, file)}`);
    expect(ours(preloaded)).toEqual(listed.sort());
  });
});
