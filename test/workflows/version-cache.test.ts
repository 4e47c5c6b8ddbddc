import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RunnableVersion } from '../../src/domain/graph.js';
import { RunnableVersionCache } from '../../src/definitions/version-cache.js';

function version(organizationId: string): RunnableVersion {
  return {
    workflowId: randomUUID(),
    entityId: randomUUID(),
    versionId: randomUUID(),
    versionNumber: 1,
    organizationId,
    workspaceId: randomUUID(),
    name: 'wf',
    graph: { nodes: {}, edges: {} },
  };
}

describe('RunnableVersionCache', () => {
  it("answers only for the version's own organization", () => {
    const cache = new RunnableVersionCache();
    const org = randomUUID();
    const v = version(org);
    cache.remember(v, 10);
    expect(cache.get(org, v.versionId)).toBe(v);
    expect(cache.get(randomUUID(), v.versionId)).toBeUndefined();
    expect(cache.get(org, randomUUID())).toBeUndefined();
  });

  it('lets the least recently used go beyond its entry bound', () => {
    const cache = new RunnableVersionCache({ maxEntries: 2, maxGraphChars: 1_000 });
    const org = randomUUID();
    const [a, b, c] = [version(org), version(org), version(org)];
    cache.remember(a, 1);
    cache.remember(b, 1);
    expect(cache.get(org, a.versionId)).toBe(a); // a is now the most recently used
    cache.remember(c, 1);
    expect(cache.get(org, b.versionId)).toBeUndefined();
    expect(cache.get(org, a.versionId)).toBe(a);
    expect(cache.get(org, c.versionId)).toBe(c);
  });

  it('keeps the graphs within its character budget and never keeps one larger than it', () => {
    const cache = new RunnableVersionCache({ maxEntries: 100, maxGraphChars: 100 });
    const org = randomUUID();
    const [a, b, c, huge] = [version(org), version(org), version(org), version(org)];
    cache.remember(a, 40);
    cache.remember(b, 40);
    cache.remember(b, 40); // remembered again: counted once
    cache.remember(c, 40);
    expect(cache.get(org, a.versionId)).toBeUndefined();
    expect(cache.get(org, b.versionId)).toBe(b);
    expect(cache.get(org, c.versionId)).toBe(c);
    cache.remember(huge, 101);
    expect(cache.get(org, huge.versionId)).toBeUndefined();
    expect(cache.get(org, c.versionId)).toBe(c);
  });
});
