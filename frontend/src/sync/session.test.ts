import { describe, expect, it } from "vitest";
import { TENSOR, type LoomDocument } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import { reflected, Session } from "./session";

const base: LoomDocument = { id: "g", nodes: [{ id: "x", type: TENSOR, label: "x", body: { dtype: "float32" } }] };
const rename = (label: string, id = "x"): EditOp[] => [{ op: "update_node", id, label }];
const add = (id: string): EditOp[] => [{ op: "add_node", node: { id, type: TENSOR, label: id, body: { dtype: "int8" } } }];
const labels = (s: Session) => s.document!.nodes.map((n) => n.label);

const ann = { client: "c1", user: "ann", name: "ann", selection: [], cursor: null };
const bob = (client: string, selection: string[]) => ({ client, user: "bob", name: "bob", selection, cursor: null });
const join = (client: string, user: string) => ({ type: "presence" as const, event: "join" as const, client, user, name: user, selection: [], cursor: null });

function started(): Session {
  const s = new Session("c");
  s.snapshot(base, 3, [], [ann]);
  return s;
}

/** The server's answer to a sent edit: applied as ``version``. */
function apply(s: Session, msg: { id: string; ops: EditOp[] }, version: number) {
  return s.applied({ type: "applied", id: msg.id, version, ops: msg.ops, issues: [], author: "ann" });
}

describe("Session", () => {
  it("shows a local edit at once and sends it against the confirmed version", () => {
    const s = started();
    const id = s.edit(rename("x2"));
    const msg = s.next()!;
    expect([msg.type, msg.id, msg.baseVersion, msg.ops]).toEqual(["edit", id, 3, rename("x2")]);
    expect([labels(s), s.confirmed!.nodes[0]!.label, s.inFlight]).toEqual([["x2"], "x", 1]);
  });

  it("confirms our edit when the server applies it", () => {
    const s = started();
    s.edit(rename("x2"));
    const msg = s.next()!;
    const got = apply(s, msg, 4);
    expect([got.mine, s.version, s.inFlight, labels(s)]).toEqual([rename("x2"), 4, 0, ["x2"]]);
  });

  it("takes a rejected edit away and changes nothing else", () => {
    const s = started();
    s.edit(rename("x2"));
    const msg = s.next()!;
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
    expect([s.inFlight, s.next()]).toEqual([0, null]);
  });

  it("says when the server's ops do not fit what it has (then a new snapshot is needed)", () => {
    const s = started();
    expect(s.applied({ type: "applied", id: "o", version: 4, ops: [{ op: "remove_node", id: "gone" }], issues: [] }).outOfSync).toBe(true);
  });

  it("keeps the server's issue counts, and forgets them when a message has none", () => {
    const s = started();
    s.applied({ type: "applied", id: null, version: 4, ops: [], issues: [], issueCounts: { error: 5312, warning: 0 } });
    expect(s.issueCounts).toEqual({ error: 5312, warning: 0 });
    s.applied({ type: "applied", id: null, version: 5, ops: [], issues: [] });
    expect(s.issueCounts).toBeNull();
  });
});

describe("Session: one edit at a time", () => {
  it("sends the next edit only once the previous one is answered, in order", () => {
    const s = started();
    s.edit(rename("a"));
    s.edit(rename("b"));
    const first = s.next()!;
    expect(s.next()).toBeNull();
    apply(s, first, 4);
    const second = s.next()!;
    expect([first.ops, second.ops]).toEqual([rename("a"), rename("b")]);
  });

  it("bases a burst on our own versions, so an edit never conflicts with the one before it", () => {
    const s = started();
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    apply(s, s.next()!, 4);
    expect(s.next()!.baseVersion).toBe(4);
  });

  it("keeps the version the user saw when someone else's edit came between", () => {
    const s = started();
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    const first = s.next()!;
    s.applied({ type: "applied", id: "bob-1", version: 4, ops: rename("bob's"), issues: [], author: "bob" });
    apply(s, first, 5);
    // version 4 is bob's: the server must still check the rename against it
    expect(s.next()!.baseVersion).toBe(3);
  });

  it("bases an edit made after someone else's on it", () => {
    const s = started();
    s.applied({ type: "applied", id: "bob-1", version: 4, ops: rename("bob's"), issues: [], author: "bob" });
    s.edit(rename("mine"));
    expect(s.next()!.baseVersion).toBe(4);
  });
});

describe("Session: a dropped line", () => {
  it("never re-sends an edit acknowledged before the drop", () => {
    const s = started();
    s.edit(add("t"));
    apply(s, s.next()!, 4);
    s.lineLost();
    const resync = s.snapshot(applyOps(base, add("t")), 4, [], []);
    expect([resync, s.inFlight, s.next()]).toEqual([{ applied: [], resend: 0 }, 0, null]);
  });

  it("keeps unsent edits and edits made while down, and sends them after the snapshot", () => {
    const s = started();
    s.edit(add("t"));
    s.lineLost();
    s.edit(add("u")); // made while the line is down
    const resync = s.snapshot(base, 3, [], []);
    expect([resync.resend, s.inFlight, labels(s)]).toEqual([2, 2, ["x", "t", "u"]]);
    const first = s.next()!;
    expect([first.ops, first.baseVersion]).toEqual([add("t"), 3]);
  });

  it("re-sends the edit on the wire when the snapshot's version shows nothing new", () => {
    const s = started();
    s.edit(add("t"));
    const sent = s.next()!;
    s.lineLost();
    const resync = s.snapshot(base, 3, [], []);
    const again = s.next()!;
    expect([resync, again.id, again.ops, again.baseVersion]).toEqual([{ applied: [], resend: 1 }, sent.id, add("t"), 3]);
  });

  it("confirms, and does not re-send, the edit whose applied the drop lost, when the snapshot shows it", () => {
    const s = started();
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    s.next();
    s.lineLost();
    // the server applied the add as version 4, then the line dropped before its applied arrived
    const resync = s.snapshot(applyOps(base, add("t")), 4, [], []);
    expect([resync.applied.map((p) => p.ops), resync.resend, s.inFlight]).toEqual([[add("t")], 1, 1]);
    const next = s.next()!;
    // the rename builds on the add: version 4 was ours, so it is the base
    expect([next.ops, next.baseVersion]).toEqual([rename("t2", "t"), 4]);
  });

  it("keeps the older base when others edited too while the line was down", () => {
    const s = started();
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    s.next();
    s.lineLost();
    const theirs = applyOps(applyOps(base, add("t")), rename("bob's"));
    const resync = s.snapshot(theirs, 5, [], []);
    expect([resync.applied.length, s.next()!.baseVersion]).toEqual([1, 3]);
  });

  it("re-sends an edit the snapshot does not show, even when others moved the version on", () => {
    const s = started();
    s.edit(rename("mine"));
    s.next();
    s.lineLost();
    const resync = s.snapshot(applyOps(base, add("bobs")), 4, [], []);
    expect([resync.resend, s.next()!.ops]).toEqual([1, rename("mine")]);
  });

  it("leaves an edit on an open line awaited when the graph is replaced (its answer still comes)", () => {
    const s = started();
    s.edit(rename("mine"));
    s.next();
    s.snapshot(base, 4, [], []);
    expect([s.inFlight, s.next()]).toEqual([1, null]);
  });
});

describe("reflected", () => {
  const doc = applyOps(base, add("t"));
  it.each([
    ["an added node that exists", add("t"), true],
    ["an added node that does not", add("u"), false],
    ["a removed node that is gone", [{ op: "remove_node", id: "gone" }] as EditOp[], true],
    ["a removed node still there", [{ op: "remove_node", id: "x" }] as EditOp[], false],
    ["a merge that changes nothing", rename("x"), true],
    ["a merge that changes the label", rename("y"), false],
    ["an edit reflected only in part", [...add("t"), ...rename("y")], false],
  ])("%s", (_label, ops, expected) => {
    expect(reflected(doc, ops)).toBe(expected);
  });
});

describe("Session: presence", () => {
  it.each([
    ["someone joins", [join("c2", "bob")], [ann, bob("c2", [])]],
    ["the same user in a second tab is another client", [join("c2", "ann")], [ann, { ...bob("c2", []), user: "ann", name: "ann" }]],
    ["someone selects", [join("c2", "bob"), { ...join("c2", "bob"), event: "update" as const, selection: ["x"] }], [ann, bob("c2", ["x"])]],
    ["someone leaves", [join("c2", "bob"), { ...join("c2", "bob"), event: "leave" as const }], [ann]],
  ])("%s", (_label, msgs, want) => {
    const s = started();
    msgs.forEach((m) => s.presence(m));
    expect(s.present).toEqual(want);
  });
});

describe("Session: not now", () => {
  it("queues an edit the server could not take now again, first in line, and sends it again", () => {
    const s = started();
    s.edit(rename("a"));
    s.edit(rename("b"));
    const first = s.next()!;
    expect([s.requeue(first.id), s.requeue("someone-else"), s.inFlight]).toEqual([true, false, 2]);
    expect(s.next()!.id).toBe(first.id);
  });
});
