import { describe, expect, it } from "vitest";
import { TENSOR, type LoomDocument } from "../model/document";
import type { EditOp } from "../model/edits";
import { Session } from "./session";

const base: LoomDocument = { id: "g", nodes: [{ id: "x", type: TENSOR, label: "x", body: { dtype: "float32" } }] };
const rename = (label: string): EditOp[] => [{ op: "update_node", id: "x", label }];
const labels = (s: Session) => s.document!.nodes.map((n) => n.label);

const ann = { client: "c1", user: "ann", name: "ann", selection: [], cursor: null };
const bob = (client: string, selection: string[]) => ({ client, user: "bob", name: "bob", selection, cursor: null });
const join = (client: string, user: string) => ({ type: "presence" as const, event: "join" as const, client, user, name: user, selection: [], cursor: null });

function started(): Session {
  const s = new Session("c");
  s.snapshot(base, 3, [], [ann]);
  return s;
}

describe("Session", () => {
  it("shows a local edit at once and sends it against the confirmed version", () => {
    const s = started();
    const msg = s.edit(rename("x2"));
    expect([msg.type, msg.id, msg.baseVersion, msg.ops]).toEqual(["edit", "c-1", 3, rename("x2")]);
    expect([labels(s), s.confirmed!.nodes[0]!.label, s.inFlight]).toEqual([["x2"], "x", 1]);
  });

  it("confirms our edit when the server applies it", () => {
    const s = started();
    const msg = s.edit(rename("x2"));
    const got = s.applied({ type: "applied", id: msg.id, version: 4, ops: msg.ops, issues: [], author: "ann" });
    expect([got.mine, s.version, s.inFlight, labels(s)]).toEqual([rename("x2"), 4, 0, ["x2"]]);
  });

  it("takes a rejected edit away and changes nothing else", () => {
    const s = started();
    const msg = s.edit(rename("x2"));
    expect(s.rejected({ type: "rejected", id: msg.id, reason: "conflict", message: "m", version: 3 })).toEqual(rename("x2"));
    expect([labels(s), s.version, s.inFlight]).toEqual([["x"], 3, 0]);
  });

  it("applies someone else's edit under ours", () => {
    const s = started();
    s.edit([{ op: "update_node", id: "x", body: { dtype: "int8" } }]);
    const got = s.applied({ type: "applied", id: "other-1", version: 4, ops: rename("bob's"), issues: [], author: "bob" });
    expect([got.mine, labels(s), s.document!.nodes[0]!.body.dtype]).toEqual([null, ["bob's"], "int8"]);
  });

  it("refuses ops that do not apply, queuing nothing", () => {
    const s = started();
    expect(() => s.edit([{ op: "remove_node", id: "nope" }])).toThrow('node "nope" does not exist');
    expect(s.inFlight).toBe(0);
  });

  it("says when the server's ops do not fit what it has (then a new snapshot is needed)", () => {
    const s = started();
    expect(s.applied({ type: "applied", id: "o", version: 4, ops: [{ op: "remove_node", id: "gone" }], issues: [] }).outOfSync).toBe(true);
  });

  it.each([
    ["someone joins", [join("c2", "bob")], [ann, bob("c2", [])]],
    ["the same user in a second tab is another client", [join("c2", "ann")], [ann, { ...bob("c2", []), user: "ann", name: "ann" }]],
    ["someone selects", [join("c2", "bob"), { ...join("c2", "bob"), event: "update" as const, selection: ["x"] }], [ann, bob("c2", ["x"])]],
    ["someone leaves", [join("c2", "bob"), { ...join("c2", "bob"), event: "leave" as const }], [ann]],
  ])("presence: %s", (_label, msgs, want) => {
    const s = started();
    msgs.forEach((m) => s.presence(m));
    expect(s.present).toEqual(want);
  });
});
