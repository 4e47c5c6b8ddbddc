import type { RunnableVersion } from '../domain/graph.js';

export interface VersionCacheBounds {
  maxEntries: number;
  /** The stored graphs' JSON lengths added up; a parsed graph takes ~1.5 bytes of heap per character. */
  maxGraphChars: number;
}

/** ~2 MB request bodies make single graphs large: the character budget is what bounds memory. */
export const versionCacheBounds: VersionCacheBounds = { maxEntries: 1_000, maxGraphChars: 4 * 1024 * 1024 };

interface Entry {
  version: RunnableVersion;
  graphChars: number;
}

/**
 * Parsed workflow versions by organization and version id, so a case's initiate and execute do
 * not read and parse a graph the process already has. What is kept never changes once saved:
 * an update cuts a new version, and neither versions nor workflows are deleted; a version's
 * status, which changes in place (and in any process sharing the store), is not kept, so there
 * is nothing to invalidate. The least recently used entries go first beyond the bounds.
 */
export class RunnableVersionCache {
  private readonly entries = new Map<string, Entry>();
  private graphChars = 0;

  constructor(private readonly bounds: VersionCacheBounds = versionCacheBounds) {}

  /** The version if it is the organization's and known here; another organization's never is. */
  get(organizationId: string, versionId: string): RunnableVersion | undefined {
    const key = keyOf(organizationId, versionId);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.version;
  }

  remember(version: RunnableVersion, graphChars: number): void {
    if (graphChars > this.bounds.maxGraphChars) return;
    const key = keyOf(version.organizationId, version.versionId);
    this.forget(key);
    this.entries.set(key, { version, graphChars });
    this.graphChars += graphChars;
    while (this.entries.size > this.bounds.maxEntries || this.graphChars > this.bounds.maxGraphChars) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.forget(oldest.value);
    }
  }

  private forget(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.graphChars -= entry.graphChars;
  }
}

function keyOf(organizationId: string, versionId: string): string {
  return `${organizationId}/${versionId}`;
}
