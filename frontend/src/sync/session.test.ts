import { describe, expect, it } from "vitest";
import { TENSOR, type Issue, type LoomDocument } from "../model/document";
import { applyOps, type EditOp } from "../model/edits";
import { Session } from "./session";

const base: LoomDocument = {
  id: "g",
  nodes: [{ id: "x", type: TENSOR, label: "x", body: { dtype: "float32" } }],
};
const rename = (label: string, id = "x"): EditOp[] => [{ op: "update_node", id, label }];
const add = (id: string): EditOp[] => [
  { op: "add_node", node: { id, type: TENSOR, label: id, body: { dtype: "int8" } } },
];
const labels = (s: Session) => s.document!.nodes.map((n) => n.label);

const ann = { client: "c1", user: "ann", name: "ann", selection: [], cursor: null };
const bob = (client: string, selection: string[]) => ({
  client,
  user: "bob",
  name: "bob",
  selection,
  cursor: null,
});
const join = (client: string, user: string) => ({
  type: "presence" as const,
  event: "join" as const,
  client,
  user,
  name: user,
  selection: [],
  cursor: null,
});

function started(): Session {
  const s = new Session("c");
  s.snapshot(base, 3, [], [ann]);
  return s;
}

/** The server's answer to a sent edit: applied as ``version``. */
function apply(s: Session, msg: { id: string; ops: EditOp[] }, version: number) {
  return s.applied({
    type: "applied",
    id: msg.id,
    version,
    ops: msg.ops,
    issues: [],
    author: "ann",
  });
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
    expect(
      s.rejected({ type: "rejected", id: msg.id, reason: "conflict", message: "m", version: 3 }),
    ).toEqual(rename("x2"));
    expect([labels(s), s.version, s.inFlight]).toEqual([["x"], 3, 0]);
  });

  it("applies someone else's edit under ours", () => {
    const s = started();
    s.edit([{ op: "update_node", id: "x", body: { dtype: "int8" } }]);
    const got = s.applied({
      type: "applied",
      id: "other-1",
      version: 4,
      ops: rename("bob's"),
      issues: [],
      author: "bob",
    });
    expect([got.mine, labels(s), s.document!.nodes[0]!.body.dtype]).toEqual([
      null,
      ["bob's"],
      "int8",
    ]);
  });

  it("refuses ops that do not apply, queuing nothing", () => {
    const s = started();
    expect(() => s.edit([{ op: "remove_node", id: "nope" }])).toThrow('node "nope" does not exist');
    expect([s.inFlight, s.next()]).toEqual([0, null]);
  });

  it("says when the server's ops do not fit what it has (then a new snapshot is needed)", () => {
    const s = started();
    expect(
      s.applied({
        type: "applied",
        id: "o",
        version: 4,
        ops: [{ op: "remove_node", id: "gone" }],
        issues: [],
      }).outOfSync,
    ).toBe(true);
  });

  it("keeps the server's issue counts, and forgets them when a message has none", () => {
    const s = started();
    s.applied({
      type: "applied",
      id: null,
      version: 4,
      ops: [],
      issues: [],
      issueCounts: { error: 5312, warning: 0 },
    });
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
    s.applied({
      type: "applied",
      id: "bob-1",
      version: 4,
      ops: rename("bob's"),
      issues: [],
      author: "bob",
    });
    apply(s, first, 5);
    // version 4 is bob's: the server must still check the rename against it
    expect(s.next()!.baseVersion).toBe(3);
  });

  it("bases an edit made after someone else's on it", () => {
    const s = started();
    s.applied({
      type: "applied",
      id: "bob-1",
      version: 4,
      ops: rename("bob's"),
      issues: [],
      author: "bob",
    });
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
    const resend = s.snapshot(applyOps(base, add("t")), 4, [], []);
    expect([resend, s.inFlight, s.next()]).toEqual([0, 0, null]);
  });

  it("keeps unsent edits and edits made while down, and sends them after the snapshot", () => {
    const s = started();
    s.edit(add("t"));
    s.lineLost();
    s.edit(add("u")); // made while the line is down
    const resend = s.snapshot(base, 3, [], []);
    expect([resend, s.inFlight, labels(s)]).toEqual([2, 2, ["x", "t", "u"]]);
    const first = s.next()!;
    expect([first.ops, first.baseVersion]).toEqual([add("t"), 3]);
  });

  it("sends the edit on the wire again as it was, same id, even when the snapshot shows it applied", () => {
    const s = started();
    s.edit(add("t"));
    const sent = s.next()!;
    s.lineLost();
    // the server applied it as version 4, and the drop lost its applied
    const resend = s.snapshot(applyOps(base, add("t")), 4, [], []);
    expect([resend, s.next()]).toEqual([1, sent]);
  });

  it("sends every unconfirmed edit again, one at a time, each with its own id", () => {
    const s = new Session("c");
    s.snapshot(base, 3, [], []);
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    s.next();
    s.lineLost();
    s.snapshot(base, 3, [], []);
    const again = s.next()!;
    expect([again.id, again.baseVersion, s.next()]).toEqual(["c-1", 3, null]);
    apply(s, again, 4);
    const renamed = s.next()!;
    expect([renamed.id, renamed.ops, renamed.baseVersion]).toEqual(["c-2", rename("t2", "t"), 4]);
  });

  it("leaves an edit on an open line awaited when the graph is replaced (its answer still comes)", () => {
    const s = started();
    s.edit(rename("mine"));
    s.next();
    s.snapshot(base, 4, [], []);
    expect([s.inFlight, s.next()]).toEqual([1, null]);
  });
});

describe("Session: the server's answer to an edit it had applied already", () => {
  const warning: Issue = {
    constraint: "C",
    type: "T",
    severity: "warning",
    summary: "s",
    message: "m",
    nodeIds: [],
  };

  /** ann adds t and renames it; the server applies the add as version 4, the drop loses its applied, bob relabels x as version 5; ann reconnects. */
  function resentAfterLostApplied() {
    const s = started();
    s.edit(add("t"));
    s.edit(rename("t2", "t"));
    const sent = s.next()!;
    s.lineLost();
    const server = applyOps(applyOps(base, add("t")), rename("bob's"));
    s.snapshot(server, 5, [warning], [], { error: 0, warning: 1 });
    const again = s.next()!;
    return { s, sent, again, server };
  }

  it("drops our pending edit and changes neither the version, the document nor the issues", () => {
    const { s, sent, again, server } = resentAfterLostApplied();
    expect(again).toEqual(sent);
    // the repeat answer: the version that edit made, its stored ops, other issues
    const got = s.applied({
      type: "applied",
      id: again.id,
      version: 4,
      ops: add("t"),
      issues: [],
      issueCounts: { error: 0, warning: 0 },
      author: "ann",
    });
    expect([got, s.version, s.confirmed, s.issues, s.issueCounts, s.inFlight]).toEqual([
      { mine: add("t"), outOfSync: false },
      5,
      server,
      [warning],
      { error: 0, warning: 1 },
      1,
    ]);
    // the add is not folded a second time, and the rename still shows on top
    expect([s.confirmed!.nodes.length, labels(s)]).toEqual([2, ["bob's", "t2"]]);
  });

  it("bases the next edit on the version the repeated one made", () => {
    const { s, again } = resentAfterLostApplied();
    s.applied({
      type: "applied",
      id: again.id,
      version: 4,
      ops: add("t"),
      issues: [],
      author: "ann",
    });
    const next = s.next()!;
    // bob's version 5 is still checked against; our add (4) is no conflict for the rename
    expect([next.ops, next.baseVersion]).toEqual([rename("t2", "t"), 4]);
  });

  it("ignores a second answer for an edit confirmed already", () => {
    const { s, again, server } = resentAfterLostApplied();
    s.applied({
      type: "applied",
      id: again.id,
      version: 4,
      ops: add("t"),
      issues: [],
      author: "ann",
    });
    const got = s.applied({
      type: "applied",
      id: again.id,
      version: 4,
      ops: add("t"),
      issues: [],
      author: "ann",
    });
    expect([got, s.version, s.confirmed, s.inFlight]).toEqual([
      { mine: null, outOfSync: false },
      5,
      server,
      1,
    ]);
  });

  it("folds the answer as news when its version is the next one (applied after the snapshot was read)", () => {
    const s = started();
    s.edit(add("t"));
    s.next();
    s.lineLost();
    s.snapshot(base, 3, [], []);
    const again = s.next()!;
    const got = s.applied({
      type: "applied",
      id: again.id,
      version: 4,
      ops: add("t"),
      issues: [warning],
      author: "ann",
    });
    expect([
      got.mine,
      s.version,
      s.confirmed!.nodes.map((n) => n.id),
      s.issues,
      s.inFlight,
    ]).toEqual([add("t"), 4, ["x", "t"], [warning], 0]);
  });
});

describe("Session: versions", () => {
  it("ignores an event the snapshot already holds (queued while it was read)", () => {
    const s = started();
    const doc = s.confirmed;
    const got = s.applied({
      type: "applied",
      id: "bob-1",
      version: 3,
      ops: add("t"),
      issues: [],
      author: "bob",
    });
    expect([got, s.version, s.confirmed]).toEqual([{ mine: null, outOfSync: false }, 3, doc]);
  });

  it("says it is out of sync when a version was skipped, and changes nothing", () => {
    const s = started();
    s.edit(rename("mine"));
    const sent = s.next()!;
    const doc = s.confirmed;
    const got = s.applied({
      type: "applied",
      id: sent.id,
      version: 5,
      ops: rename("mine"),
      issues: [],
      author: "ann",
    });
    expect([got, s.version, s.confirmed, s.inFlight]).toEqual([
      { mine: null, outOfSync: true },
      3,
      doc,
      1,
    ]);
    // the reconnect's snapshot sends it again, with its id, for the server to answer
    s.lineLost();
    s.snapshot(applyOps(base, rename("mine")), 5, [], []);
    expect(s.next()!.id).toBe(sent.id);
  });
});

describe("Session: edit ids", () => {
  it("start with the client's id and count up; a kind goes first", () => {
    const client = "123e4567-e89b-42d3-a456-426614174000";
    const s = new Session(client);
    s.snapshot(base, 3, [], []);
    expect([s.edit(add("t")), s.newId("shard"), s.edit(add("u"))]).toEqual([
      `${client}-1`,
      `shard-${client}-2`,
      `${client}-3`,
    ]);
  });
});

describe("Session: presence", () => {
  it.each([
    ["someone joins", [join("c2", "bob")], [ann, bob("c2", [])]],
    [
      "the same user in a second tab is another client",
      [join("c2", "ann")],
      [ann, { ...bob("c2", []), user: "ann", name: "ann" }],
    ],
    [
      "someone selects",
      [join("c2", "bob"), { ...join("c2", "bob"), event: "update" as const, selection: ["x"] }],
      [ann, bob("c2", ["x"])],
    ],
    [
      "someone leaves",
      [join("c2", "bob"), { ...join("c2", "bob"), event: "leave" as const }],
      [ann],
    ],
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
