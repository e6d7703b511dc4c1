// The page's side of the layout worker: one request at a time, only the latest answer counts.
// Layouts ahead (``warm``) are answered too, in the worker's idle time, and never overtaken.

import type { Layout, LayoutInput } from "./layout";
import type { Rect } from "./viewport";

type Answer = (rects: [string, Rect][] | null) => void;

export class LayoutClient {
  private worker: Worker;
  private seq = 0;
  /** Layouts ahead count down from -1 (the worker lays out a negative ``seq`` in its idle time). */
  private ahead = 0;
  private waiting = new Map<number, Answer>();

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

  /** Lay ``input`` out ahead, when the worker has nothing asked for: the layout, or null when ELK failed. */
  warm(input: LayoutInput): Promise<Layout | null> {
    return this.post(--this.ahead, input);
  }

  /** The layout of ``input``, or null when a later request overtook this one or ELK failed. */
  layout(input: LayoutInput): Promise<Layout | null> {
    const seq = ++this.seq;
    for (const [old, done] of this.waiting) if (old > 0 && old < seq) done(null);
    return this.post(seq, input);
  }

  private post(seq: number, input: LayoutInput): Promise<Layout | null> {
    return new Promise((resolve) => {
      this.waiting.set(seq, (rects) => resolve(rects ? { rects: new Map(rects) } : null));
      this.worker.postMessage({ seq, input });
    });
  }
}
