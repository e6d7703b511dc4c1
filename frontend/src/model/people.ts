// Messages for people (issue 36): a refusal the server words for programs names nodes by id
// and sometimes an API field ("cascade"); what the editor shows a person names nodes by label
// (an unlabelled one by what it is) and says what to do in the editor instead.

import type { LoomDocument } from "./document";

const UUID = /"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"/gi;

/** What a node is called in a message: its label, or "an unnamed tensor" (its kind). */
function called(doc: LoomDocument | null, id: string): string {
  const node = doc?.nodes.find((n) => n.id === id);
  if (!node) return "a node that is gone";
  if (node.label) return `"${node.label}"`;
  const kind = node.type.split("/").pop()?.toLowerCase() || "node";
  return `an unnamed ${kind}`;
}

/** ``message`` with node ids replaced by names and API-only advice replaced by the editor's. */
export function forPeople(message: string, doc: LoomDocument | null): string {
  return message
    .replace(
      /; remove or change those first, or pass "cascade": true to remove them too/,
      "; select them too and delete them together, or change them first",
    )
    .replace(/^edit op \d+ \(\w+\): /, "")
    .replace(UUID, (_, id: string) => called(doc, id));
}
