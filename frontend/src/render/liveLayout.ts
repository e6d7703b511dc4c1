// The layout of the document as shown, kept across its changes: each new document gets a new
// view whose boxes keep their places at once where they can (``keptLayout``); ELK, in the layout
// worker when the page has one, places the rest, and only the latest request's answer counts.

import { graphView, type GraphView, type LoomDocument } from "../model/document";
import { gridLayout, keptLayout, layoutInput, type Layout } from "./layout";
import { LayoutClient } from "./layoutClient";

export class LiveLayout {
  view: GraphView | null = null;
  layout: Layout = { rects: new Map() };
  private seq = 0;
  private readonly client: LayoutClient | null;

  /** ``placed`` runs when ELK's layout of the current view arrives. */
  constructor(private readonly placed: () => void) {
    let client: LayoutClient | null;
    try {
      client = new LayoutClient();
    } catch {
      client = null;
    }
    this.client = client;
  }

  /** Show ``doc``: its view, with the boxes that can keep their rects at once. */
  show(doc: LoomDocument): void {
    const view = graphView(doc);
    this.view = view;
    const kept = keptLayout(view, this.layout);
    this.layout = kept.layout;
    if (kept.complete) return;
    const seq = ++this.seq;
    const done = (layout: Layout | null): void => {
      if (!layout || seq !== this.seq || this.view !== view) return;
      this.layout = layout;
      this.placed();
    };
    if (this.client) void this.client.layout(view).then(done);
    else done({ rects: new Map(gridLayout(layoutInput(view))) });
  }
}
