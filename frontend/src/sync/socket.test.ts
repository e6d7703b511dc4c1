import { describe, expect, it } from "vitest";
import { socketUrl } from "./socket";

describe("socketUrl", () => {
  it.each([
    ["plain http", { protocol: "http:", host: "localhost:8000" }, "ws://localhost:8000/ws/graphs/g/"],
    ["behind TLS", { protocol: "https:", host: "geon.example" }, "wss://geon.example/ws/graphs/g/"],
  ])("%s", (_label, location, expected) => {
    expect(socketUrl("/ws/graphs/g/", location)).toBe(expected);
  });
});
