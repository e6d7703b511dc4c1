// When to try the websocket again after it drops: exponential backoff, capped, with jitter so
// that a class of clients cut off by one restart does not reconnect in the same instant.

/** The first retry waits about this long (ms); each failed try doubles it. */
export const BACKOFF_BASE_MS = 1_000;
/** No wait is longer than this (ms). */
export const BACKOFF_CAP_MS = 30_000;

/**
 * The wait before retry number ``failures`` (0 for the first retry after a drop): the capped
 * exponential ``min(cap, base * 2^failures)``, of which a random upper half is taken ("equal
 * jitter"), so the wait is never under half the schedule and never over the cap.
 */
export function backoffDelay(failures: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(failures, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
