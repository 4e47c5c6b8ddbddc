import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliPath } from './support.js';

/** Every file `main.js` loads before a command runs: its static imports, followed (dynamic imports are not). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    // Compiled ES modules: `import … from '…'` and `export … from '…'`; `import type` is gone after tsc.
    for (const [, spec] of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms))
      if (spec) visit(path.resolve(path.dirname(file), spec));
  };
  visit(entry);
  return seen;
}

/** The files of dist/src `main.js` loads at start, relative to dist/src. */
const loadedAtStart = () => [...staticGraph(cliPath)].map((f) => path.relative(path.dirname(path.dirname(cliPath)), f));

describe('CLI start-up', () => {
  it('loads no server-side module before a command runs (they are imported by the command that needs them)', () => {
    const loaded = loadedAtStart();
    expect(loaded).toContain('cli/client/index.js');
    const serverSide = loaded.filter((f) =>
      /^(service|context)\.js$|^(store|temporal|api|python|tenancy|catalog|connections|crypto|logging)\//.test(f),
    );
    expect(serverSide).toEqual([]);
  });

  it('loads the workflow file compiler only for `workflow apply|export` (its error class aside)', () => {
    const loaded = loadedAtStart();
    expect(loaded).toContain('workflow-files/errors.js');
    expect(loaded.filter((f) => f.startsWith('workflow-files/') && f !== 'workflow-files/errors.js')).toEqual([]);
  });
});
