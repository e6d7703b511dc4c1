// The page's side of the layout worker: one request at a time, only the latest answer counts.

import type { Layout, LayoutInput } from "./layout";
import type { Rect } from "./viewport";

export class LayoutClient {
  private worker: Worker;
  private seq = 0;
  private waiting = new Map<number, (rects: [string, Rect][] | null) => void>();

  constructor() {
    this.worker = new Worker(new URL("./layout.worker.ts", import.meta.url), { type: "module" });
    this.worker.onmessage = (
      e: MessageEvent<{ seq: number; rects?: [string, Rect][]; error?: string }>,
    ) => {
      const done = this.waiting.get(e.data.seq);
      this.waiting.delete(e.data.seq);
      done?.(e.data.rects ?? null);
    };
  }

  /** Lay ``input`` out ahead, for the worker's cache of levels only (render/groupLayout.ts): no answer is awaited. */
  warm(input: LayoutInput): void {
    this.worker.postMessage({ seq: 0, input });
  }

  /** The layout of ``input``, or null when a later request overtook this one or ELK failed. */
  layout(input: LayoutInput): Promise<Layout | null> {
    const seq = ++this.seq;
    for (const [old, done] of this.waiting) if (old < seq) done(null);
    return new Promise((resolve) => {
      this.waiting.set(seq, (rects) => resolve(rects ? { rects: new Map(rects) } : null));
      this.worker.postMessage({ seq, input });
    });
  }
}
