// "Load into a run" in the editor (issue 36): the failing draw's axis lengths set on the graph
// as one undoable edit, and its inputs put in the Run panel's file field as an .npz; the
// student presses Run and sees their graph's output on exactly the inputs that failed.

import { editAxis } from "../model/authorAxes";
import { declaredAxes } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import type { Counterexample } from "../ui/puzzle";
import type { Editor } from "../editor";
import { counterexampleRun } from "./counterexampleRun";
import { npz } from "./npz";

/** Load ``c`` into the editor's run; answers what was done, or why not, in a sentence. */
export function loadCounterexample(
  editor: Editor,
  c: Counterexample,
  dtypes: Record<string, string>,
): string {
  const doc = editor.sync.session.document;
  const field = document.querySelector<HTMLInputElement>(".geon-run-file");
  if (!doc || !field || !c.inputs) return "There is no Run panel here to load the inputs into.";
  const made = counterexampleRun(c.inputs, dtypes, doc);
  if (typeof made === "string") return made;
  const declared = declaredAxes(doc);
  const changes = Object.entries(made.lengths).filter(
    ([name, length]) => declared.has(name) && declared.get(name)!.length !== length,
  );
  const named = changes.map(([name, length]) => `${name}=${length}`).join(", ");
  if (changes.length) {
    const refused = editor.perform(`axes ${named} for the counterexample`, (current) => {
      let at = current;
      const ops: EditOp[] = [];
      for (const [name, length] of changes) {
        const axis = declaredAxes(at).get(name)!;
        const step = editAxis(at, axis.id, { name, length, roles: axis.roles });
        ops.push(...step);
        at = applyOps(at, step);
      }
      return ops;
    });
    if (refused) return refused;
  }
  const files = new DataTransfer();
  files.items.add(
    new File([npz(made.arrays).slice().buffer as ArrayBuffer], "counterexample.npz", {
      type: "application/octet-stream",
    }),
  );
  field.files = files.files;
  return `${changes.length ? `Axes set to ${named} (Undo puts them back); t` : "T"}he inputs that failed are in the Run panel: press Run to see what your graph makes of them.`;
}
