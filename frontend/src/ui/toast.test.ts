import { describe, expect, it } from "vitest";
import { toastMillis } from "./toast";

describe("how long a toast stays (issue 35: toasts close)", () => {
  it.each([
    ["a short message", "saved", 6_000],
    ["60 characters", "x".repeat(60), 6_000],
    ["a longer refusal, 50 ms a character more", "x".repeat(160), 11_000],
    ["at most 20 s", "x".repeat(5_000), 20_000],
  ])("%s", (_label, message, expected) => {
    expect(toastMillis(message)).toBe(expected);
  });
});
