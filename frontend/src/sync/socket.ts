// The graph's websocket: connects, parses frames, sends messages, and when the line drops tries
// again after a backoff (``backoff.ts``) until it is open again, unless the server refused us:
// the close codes in ``REFUSED`` (signed out, no such graph or no access) stop the retries, as
// does ``close()``.

import { backoffDelay } from "./backoff";
import { SERVER_MESSAGE_TYPES, type ServerMessage } from "./protocol";

export interface SocketHandlers {
  /** A connection is being started (``attempt`` counts them, the first is 1). */
  onConnecting(attempt: number): void;
  onOpen(): void;
  onMessage(msg: ServerMessage): void;
  /** The line closed: ``retryIn`` is the wait (ms) before the next try, null when no retry comes (refused or stopped). */
  onClose(code: number, retryIn: number | null): void;
  onInvalid(reason: string): void;
}

/** The server's close codes that end the session: retrying would be refused the same way. */
export const CLOSE_SIGNED_OUT = 4401;
export const CLOSE_NO_ACCESS = 4404;
const REFUSED = new Set([CLOSE_SIGNED_OUT, CLOSE_NO_ACCESS]);

/** The WebSocket constructor (a parameter so the reconnect logic runs under tests without a server). */
export type SocketFactory = (url: string) => WebSocket;

export class GraphSocket {
  /** How many connections were started, the first included. */
  attempts = 0;
  private socket: WebSocket | null = null;
  /** Tries that failed since the line was last open: the backoff's exponent. */
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly handlers: SocketHandlers,
    private readonly open: SocketFactory = (u) => new WebSocket(u),
    private readonly random: () => number = Math.random,
  ) {}

  connect(): void {
    this.timer = null;
    this.attempts += 1;
    const socket = this.open(this.url);
    this.socket = socket;
    this.handlers.onConnecting(this.attempts);
    socket.onopen = () => {
      this.failures = 0;
      this.handlers.onOpen();
    };
    socket.onmessage = (event: MessageEvent<string>) => {
      const msg = parseMessage(event.data);
      if (msg.type === "invalid") this.handlers.onInvalid(msg.reason);
      else this.handlers.onMessage(msg);
    };
    socket.onclose = (event: CloseEvent) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.stopped || REFUSED.has(event.code)) {
        this.handlers.onClose(event.code, null);
        return;
      }
      const delay = backoffDelay(this.failures++, this.random);
      this.timer = setTimeout(() => this.connect(), delay);
      this.handlers.onClose(event.code, delay);
    };
  }

  /** Whether messages can be sent now. */
  get isOpen(): boolean {
    return this.socket?.readyState === 1; // WebSocket.OPEN
  }

  /** Send a client message; false when the line is down (the caller keeps what it wanted to send). */
  send(message: object): boolean {
    if (!this.isOpen) return false;
    this.socket!.send(JSON.stringify(message));
    return true;
  }

  /** Drop the line and connect again: the server answers with a fresh snapshot. */
  reconnect(): void {
    this.socket?.close(4000, "out of sync");
  }

  /** While waiting to reconnect, try at once (the user asked to). */
  retryNow(): void {
    if (this.timer === null || this.stopped) return;
    clearTimeout(this.timer);
    this.connect();
  }

  close(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.socket?.close();
  }
}

/** ``ws://`` or ``wss://`` URL for a path on this page's host. */
export function socketUrl(path: string, location: { protocol: string; host: string }): string {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
}

/**
 * Why the server ended the session, for the user: ``said`` is what its last ``error`` frame
 * said (``access_removed`` comes before a 4404), used when present.
 */
export function refusalMessage(code: number, said: string | null): string {
  if (code === CLOSE_SIGNED_OUT)
    return "you are signed out, so the editor stopped: sign in again to keep editing";
  const why = said ?? "this graph was deleted, or you no longer have access to it";
  return `${why}; the editor stopped reconnecting (close code ${code})`;
}

/** Parse one websocket frame; anything not a known message is reported, not thrown. */
export function parseMessage(data: string): ServerMessage | { type: "invalid"; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { type: "invalid", reason: "not JSON" };
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type === "string" && SERVER_MESSAGE_TYPES.has(type)) return value as ServerMessage;
  return { type: "invalid", reason: `unknown message type "${String(type)}"` };
}
