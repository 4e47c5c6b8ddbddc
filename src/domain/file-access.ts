/** Who may list and read a stored file (the contract's `accessScope`); unset means unlisted. */
export const accessScopes = ['all', 'user', 'workspace', 'organization'] as const;
export type AccessScope = (typeof accessScopes)[number];
