import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BACKOFF_BASE_MS, BACKOFF_CAP_MS, backoffDelay } from "./backoff";
import {
  GraphSocket,
  parseMessage,
  refusalMessage,
  socketUrl,
  type SocketHandlers,
} from "./socket";

describe("socketUrl", () => {
  it.each([
    [
      "plain http",
      { protocol: "http:", host: "localhost:8000" },
      "ws://localhost:8000/ws/graphs/g/",
    ],
    ["behind TLS", { protocol: "https:", host: "geon.example" }, "wss://geon.example/ws/graphs/g/"],
  ])("%s", (_label, location, expected) => {
    expect(socketUrl("/ws/graphs/g/", location)).toBe(expected);
  });
});

describe("backoffDelay", () => {
  it("doubles from the base up to the cap, never under half the schedule", () => {
    const low = Array.from({ length: 8 }, (_, n) => backoffDelay(n, () => 0));
    const high = Array.from({ length: 8 }, (_, n) => backoffDelay(n, () => 1));
    expect(high).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(low).toEqual(high.map((d) => d / 2));
  });

  it("stays within [base/2, cap] for any try, however many failed", () => {
    for (const n of [0, 1, 5, 40, 10_000]) {
      const d = backoffDelay(n, Math.random);
      expect(d).toBeGreaterThanOrEqual(BACKOFF_BASE_MS / 2);
      expect(d).toBeLessThanOrEqual(BACKOFF_CAP_MS);
    }
  });
});

/** A stand-in for the browser's WebSocket (the machine's edge): the test opens and closes it. */
class FakeSocket {
  readyState = 0;
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: string }) => void) | null = null;
  onclose: ((e: { code: number }) => void) | null = null;
  send(data: string): void {
    this.sent.push(data);
  }
  close(code = 1000): void {
    this.drop(code);
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.();
  }
  drop(code: number): void {
    this.readyState = 3;
    this.onclose?.({ code });
  }
}

function harness() {
  const sockets: FakeSocket[] = [];
  const closes: [number, number | null][] = [];
  const handlers: SocketHandlers = {
    onConnecting: () => {},
    onOpen: () => {},
    onMessage: () => {},
    onClose: (code, retryIn) => closes.push([code, retryIn]),
    onInvalid: () => {},
  };
  const socket = new GraphSocket(
    "ws://x/ws/graphs/g/",
    handlers,
    () => {
      const s = new FakeSocket();
      sockets.push(s);
      return s as unknown as WebSocket;
    },
    () => 1,
  );
  return { socket, sockets, closes, last: () => sockets[sockets.length - 1]! };
}

describe("GraphSocket", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("retries with the backoff while the server is down, and starts again from the base once open", () => {
    const h = harness();
    h.socket.connect();
    h.last().open();
    h.last().drop(1006);
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(h.closes[h.closes.length - 1]![1]!);
      h.last().drop(1006); // the server is still down
    }
    expect(h.closes.map(([, d]) => d)).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
    vi.advanceTimersByTime(16_000);
    h.last().open();
    h.last().drop(1001);
    expect([h.socket.attempts, h.closes[h.closes.length - 1]]).toEqual([6, [1001, 1_000]]);
  });

  it.each([
    ["signed out", 4401],
    ["no graph or no access", 4404],
  ])("stops when the server refuses the session (%s)", (_label, code) => {
    const h = harness();
    h.socket.connect();
    h.last().open();
    h.last().drop(code);
    vi.advanceTimersByTime(10 * 60_000);
    expect([h.closes, h.socket.attempts]).toEqual([[[code, null]], 1]);
  });

  it("stops after close(), and sends nothing while down", () => {
    const h = harness();
    h.socket.connect();
    expect(h.socket.send({ type: "ping" })).toBe(false);
    h.last().open();
    expect(h.socket.send({ type: "ping" })).toBe(true);
    h.socket.close();
    vi.advanceTimersByTime(10 * 60_000);
    expect([h.socket.attempts, h.last().sent, h.closes]).toEqual([
      1,
      ['{"type":"ping"}'],
      [[1000, null]],
    ]);
  });

  it("tries at once when asked while waiting, and only then", () => {
    const h = harness();
    h.socket.connect();
    h.socket.retryNow(); // not waiting: nothing happens
    h.last().drop(1006);
    h.socket.retryNow();
    expect(h.socket.attempts).toBe(2);
    vi.advanceTimersByTime(60_000); // the cancelled timer does not fire a third
    expect(h.socket.attempts).toBe(2);
  });
});

describe("refusalMessage", () => {
  it.each([
    [4401, null, "you are signed out, so the editor stopped: sign in again to keep editing"],
    [
      4404,
      null,
      "this graph was deleted, or you no longer have access to it; the editor stopped reconnecting (close code 4404)",
    ],
    [
      4404,
      "ann removed you from this graph",
      "ann removed you from this graph; the editor stopped reconnecting (close code 4404)",
    ],
  ])("%s", (code, said, expected) => {
    expect(refusalMessage(code, said)).toBe(expected);
  });
});

describe("parseMessage", () => {
  it.each([
    ["not JSON", "{", { type: "invalid", reason: "not JSON" }],
    [
      "unknown type",
      '{"type": "nope"}',
      { type: "invalid", reason: 'unknown message type "nope"' },
    ],
    ["no type", "[1]", { type: "invalid", reason: 'unknown message type "undefined"' }],
    [
      "an error",
      '{"type": "error", "error": {"code": "c", "message": "m"}}',
      { type: "error", error: { code: "c", message: "m" } },
    ],
    ["plans changed", '{"type": "plans", "author": "bob"}', { type: "plans", author: "bob" }],
    ["a role changed", '{"type": "access", "role": "viewer"}', { type: "access", role: "viewer" }],
  ])("%s", (_label, data, expected) => {
    expect(parseMessage(data)).toEqual(expected);
  });
});
