import type { AuthContext } from '../domain/auth-context.js';

/**
 * The fields of a change to a hook or a schedule that start nothing: its name (a hook's name, a schedule's title),
 * and its on/off flag when it turns it off (a hook disabled, a schedule paused), which stops it as deleting would.
 */
export interface InertFields<T> {
  name: keyof T;
  off: { field: keyof T; value: boolean };
}

/** Who a hook's deliveries or a schedule's firings act as. */
type ActingKey = { createdByKeyId: string; createdByUserId: string };

/**
 * A change that starts nothing and changes what its hook or schedule does: every field sent is the name, or the flag
 * turning it off. A schedule's title is the label of the cases it fires, not what they do: a key that only retitled
 * answers for nothing they do. Anything else (what it starts, with what inputs, when or how often, turning it on
 * again) shapes the cases it starts as its acting key.
 */
export function startsNothing<T extends object>(changes: NoInfer<Partial<T>>, inert: InertFields<T>): boolean {
  return Object.entries(changes).every(
    ([field, value]) =>
      value === undefined || field === inert.name || (field === inert.off.field && value === inert.off.value),
  );
}

/**
 * Who a hook or a schedule acts as after a change: the changing key when the change shapes what it starts (revoking
 * that key then stops it), unchanged (undefined) when it starts nothing, so a key that only renamed or stopped it
 * answers for nothing it starts.
 */
export function actingKeyAfter<T extends object>(
  auth: AuthContext,
  changes: NoInfer<Partial<T>>,
  inert: InertFields<T>,
): ActingKey | undefined {
  return startsNothing(changes, inert) ? undefined : { createdByKeyId: auth.keyId, createdByUserId: auth.userId };
}
