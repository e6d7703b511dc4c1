// The graph's websocket: connects, parses frames, sends edits, reconnects with backoff when the
// line drops.

import { parseMessage, type ServerMessage } from "../model/state";

export interface SocketHandlers {
  onOpen(): void;
  onMessage(msg: ServerMessage): void;
  /** ``final`` is true when the server refused us (no reconnect is attempted). */
  onClose(code: number, final: boolean): void;
  onInvalid(reason: string): void;
}

const REFUSED = new Set([4401, 4404]);

export class GraphSocket {
  private socket: WebSocket | null = null;
  private retry = 0;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly handlers: SocketHandlers,
  ) {}

  connect(): void {
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onopen = () => {
      this.retry = 0;
      this.handlers.onOpen();
    };
    socket.onmessage = (event: MessageEvent<string>) => {
      const msg = parseMessage(event.data);
      if (msg.type === "invalid") this.handlers.onInvalid(msg.reason);
      else this.handlers.onMessage(msg);
    };
    socket.onclose = (event: CloseEvent) => {
      const final = this.stopped || REFUSED.has(event.code);
      this.handlers.onClose(event.code, final);
      if (!final) {
        const delay = Math.min(10_000, 500 * 2 ** this.retry++);
        window.setTimeout(() => this.connect(), delay);
      }
    };
  }

  /** Send a client message; false when the line is down (the caller's edit stays pending until the next snapshot). */
  send(message: object): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** Drop the line and connect again: the server answers with a fresh snapshot. */
  reconnect(): void {
    this.socket?.close(4000, "out of sync");
  }

  close(): void {
    this.stopped = true;
    this.socket?.close();
  }
}

/** ``ws://`` or ``wss://`` URL for a path on this page's host. */
export function socketUrl(path: string, location: { protocol: string; host: string }): string {
  return `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
}
