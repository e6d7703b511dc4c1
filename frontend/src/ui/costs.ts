/**
 * Cost-model display helpers for the editor (issue 16 item 7): human byte units, the bounded
 * log-scale edge thickness for a collective's bytes, and the one profile choice the editor
 * persists in localStorage and sends as a plan cost's `?profile=`.
 */

/** The localStorage key holding the editor's chosen hardware profile name. */
export const PROFILE_KEY = "geon.profile";

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** `bytes` in binary units with three significant figures: 1536 -> "1.50 KiB". */
export function humanBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) {
    throw new RangeError(
      `bytes must be a finite non-negative number, got ${bytes}`,
    );
  }
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toPrecision(3)} ${UNITS[unit]}`;
}

/** Edge stroke width for `bytes` moved: log2 scale from `min` px (1 byte or less) to `max` px
 * (1 TiB or more), so a label's weight grows with its bytes but never leaves those bounds. */
export function edgeWidth(bytes: number, min = 1.5, max = 8): number {
  if (!(bytes > 1)) return min;
  const t = Math.min(1, Math.log2(bytes) / 40);
  return min + t * (max - min);
}

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
