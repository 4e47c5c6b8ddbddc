import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { workflowBundlePath } from '../../src/temporal/worker.js';

/**
 * The modules the prebuilt bundle evaluates for one run, as the SDK's reused V8 context does it: what the bundle
 * loads before the first run is shared (its module cache routes through `globalThis.__webpack_module_cache__`),
 * every module required after belongs to that run and is evaluated again for the next one.
 */
function perRunModules(step: (temporal: { importInterceptors(): unknown; importWorkflows(): unknown }) => void) {
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
  running = true;
  step(vm.runInContext('__TEMPORAL__', context) as Parameters<typeof step>[0]);
  return [...run.keys()].map(String);
}

describe('the workflow bundle, per run', () => {
  it('evaluates none of OpenTelemetry for a run that is not traced (the interceptors require it when one is)', () => {
    const interceptors = perRunModules((temporal) => temporal.importInterceptors());
    expect(interceptors).toEqual([expect.stringContaining('tracing/workflow-interceptors.cjs')]);
    const workflows = perRunModules((temporal) => temporal.importWorkflows());
    expect(workflows.filter((id) => id.includes('opentelemetry'))).toEqual([]);
  });
});
