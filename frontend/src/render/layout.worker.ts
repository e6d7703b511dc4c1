// The layout worker: ELK's layered layout off the page's thread (a grouped view group by group).

import ELK from "elkjs/lib/elk.bundled.js";
import { groupLevels } from "./groupLayout";
import { runLayout, type LayoutInput } from "./layout";

const elk = new ELK();

self.onmessage = async (event: MessageEvent<{ seq: number; input: LayoutInput }>) => {
  const { seq, input } = event.data;
  try {
    const rects = await runLayout(elk, input, input.groups ? groupLevels : undefined);
    self.postMessage({ seq, rects });
  } catch (e) {
    self.postMessage({ seq, error: String(e) });
  }
};
