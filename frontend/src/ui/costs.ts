/**
 * The one hardware-profile choice the editor persists in localStorage and sends as a plan
 * cost's `?profile=` (issue 16 item 7); bytes and seconds are shown by model/plans.ts.
 */

/** The localStorage key holding the editor's chosen hardware profile name. */
export const PROFILE_KEY = "geon.profile";

/** The persisted profile name when it is one of `names`, else `fallback`. */
export function chosenProfile(
  storage: Storage,
  names: readonly string[],
  fallback: string,
): string {
  const stored = storage.getItem(PROFILE_KEY);
  return stored !== null && names.includes(stored) ? stored : fallback;
}

/** Remember `name` as the editor's profile. */
export function rememberProfile(storage: Storage, name: string): void {
  storage.setItem(PROFILE_KEY, name);
}
