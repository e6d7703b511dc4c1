// The layout worker: ELK's layered layout off the page's thread (a grouped view group by group).

import ELK from "elkjs/lib/elk.bundled.js";
import { groupLevels } from "./groupLayout";
import { runLayout, type LayoutInput } from "./layout";

const elk = new ELK();
// ELK's first layout runs its code cold (about four times slower): warm it while the page loads,
// before a document arrives
void elk.layout({
  id: "warm",
  layoutOptions: { "elk.algorithm": "layered" },
  children: [
    { id: "a", width: 9, height: 9 },
    { id: "b", width: 9, height: 9 },
    { id: "c", width: 9, height: 9 },
  ],
  edges: [
    { id: "e", sources: ["a"], targets: ["b"] },
    { id: "f", sources: ["a"], targets: ["c"] },
  ],
});

/** Layouts asked for and not yet answered; a layout ahead (negative seq) waits while there are any. */
let asked = 0;
const idle = async (): Promise<void> => {
  do await new Promise((done) => setTimeout(done, 0));
  while (asked > 0);
};

self.onmessage = async (event: MessageEvent<{ seq: number; input: LayoutInput }>) => {
  const { seq, input } = event.data;
  const ahead = seq < 0;
  if (!ahead) asked += 1;
  try {
    const rects = await runLayout(
      elk,
      input,
      ahead ? (e, i) => groupLevels(e, i, idle) : input.groups ? groupLevels : undefined,
    );
    self.postMessage({ seq, rects });
  } catch (e) {
    self.postMessage({ seq, error: String(e) });
  } finally {
    if (!ahead) asked -= 1;
  }
};
