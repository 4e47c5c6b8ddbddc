// The registry proxy our machines use does not serve every platform build of
// packages with per-platform optional dependencies (@swc/core, rollup), so a
// lock written here lacks their entries and `npm ci` refuses it as out of sync.
// This adds the missing entries, marked optional with their os/cpu, which
// `npm ci` then skips on other platforms. Run after any `npm install`:
//   node scripts/complete-lockfile.mjs package-lock.json
import { readFileSync, writeFileSync } from 'node:fs';
const file = process.argv[2];
const lock = JSON.parse(readFileSync(file, 'utf8'));
const pkgs = lock.packages;
const osOf = (n) => (n.match(/darwin|win32|linux|android|freebsd|openbsd|openharmony|sunos|aix|netbsd/) || [null])[0];
const cpuOf = (n) => (n.match(/arm64|x64|ia32|arm|ppc64|s390x|riscv64|loong64/) || [null])[0];
let added = 0;
for (const [path, meta] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    if (pkgs[key] || pkgs[`${path}/node_modules/${name}`]) continue;
    const os = osOf(name.split('/').pop());
    const cpu = cpuOf(name.split('/').pop());
    if (!os || !cpu) continue;
    pkgs[key] = { version, cpu: [cpu], os: [os], optional: true };
    added++;
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform entries`);
