// The message a failed call of the Reviews panel shows: an Error's own words (the server's, as
// sync/reviewsApi.ts raises them), anything else as text.

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
