import { parseKey } from '../../src/auth/api-keys.js';

/** The secret part of an API key (base64url, so it may itself contain underscores). */
export const secretOf = (key: string): string => parseKey(key)?.secret ?? key;
