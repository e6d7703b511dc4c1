import { describe, expect, it } from "vitest";
import { forPeople } from "./people";

const T = "0e8989be-daae-4d80-814e-18839af4822b";
const OP = "0a1920c0-3a02-470e-a3bb-e2210622ad74";
const GONE = "7571c6ae-d85d-497c-8822-89755616568f";
const doc = {
  id: "g",
  nodes: [
    {
      id: T,
      type: "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Tensor",
      label: "x",
      body: {},
    },
    {
      id: OP,
      type: "http://tensortapestry.org/schemas/loom/2024-01/node_types.jsd#/nodes/Operation",
      body: {},
    },
  ],
};

describe("forPeople (issue 36)", () => {
  it("names nodes by label, never by id, and says what to do in the editor instead of an API flag", () => {
    const said = forPeople(
      `edit op 0 (remove_node): node "${T}" is referenced by "${OP}", "${GONE}"; remove or change those first, or pass "cascade": true to remove them too`,
      doc,
    );
    expect(said).toBe(
      'node "x" is referenced by an unnamed operation, a node that is gone; select them too and delete them together, or change them first',
    );
    expect(said).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-|cascade/);
  });
});
