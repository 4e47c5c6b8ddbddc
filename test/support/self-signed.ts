import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A key and a self-signed certificate (PEM) for one subject alternative name (`IP:127.0.0.1`, `DNS:hook.test`),
 * made by openssl for a day; the certificate is also the CA that trusts it.
 */
export function selfSignedCertificate(altName: string): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'caseflow-tls-'));
  try {
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${altName.split(':')[1]}`],
        ...['-addext', `subjectAltName=${altName}`, '-keyout', key, '-out', cert],
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
