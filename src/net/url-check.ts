import { DomainError } from '../errors.js';
import { OutboundRefusedError, type Outbound } from './outbound.js';

/** A tenant-given URL the outbound policy refuses is a 400 on `field` now, not failed deliveries later. */
export async function checkTenantUrl(outbound: Outbound, url: string, field: string): Promise<void> {
  try {
    await outbound.checkUrl(url);
  } catch (err) {
    if (!(err instanceof OutboundRefusedError)) throw err;
    throw DomainError.invalidFields([{ field, message: err.message }]);
  }
}
