// Authoring: what each user command changes in the document, as edit ops (one list per user
// action, so one action is one undo step). Pure functions of the document; a command that cannot
// apply throws an AuthorError that names the bad value and says what would be valid, and nothing
// is sent.

import { AXIS_NAME, baseNames, canonical, refLength, type AxisDecl, type Declared } from "./axes";
import { inferAxes } from "./infer/dispatch";
import { deriveSelections, deriveSignature, type Inference } from "./infer/inference";
import { InferenceError } from "./infer/messages";
import { CATALOGUE } from "./catalogue";
import {
  APPLICATION,
  AXIS,
  declaredAxes,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  LAYOUT,
  nodeById,
  OPERATION,
  ROLES,
  selections,
  TENSOR,
  TENSOR_AXES,
  tensorAxes,
  tensorRange,
  type LoomDocument,
  type LoomNode,
  type Point,
  type Range,
  type Selection,
} from "./document";
import { applyOps, type EditOp } from "./edits";
import { axisEditRefusal, renamedParams, renameRef } from "./axisRename";

/** A command that cannot apply; like the server's refusal of such an edit, an ``invalid_edit``. */
export class AuthorError extends Error {
  readonly code = "invalid_edit";
}

const q = (items: Iterable<string>): string => `(${[...items].map((i) => `"${i}"`).join(", ")})`;

/** A random UUID, also where crypto.randomUUID is missing (plain http on a non-local host). */
export function uuid(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// --- axes -------------------------------------------------------------------------------------

export interface AxisInput {
  name: string;
  length: number | null;
  roles?: string[];
}

function checkAxis(doc: LoomDocument, input: AxisInput, self?: string): AxisDecl {
  const name = input.name.trim();
  if (!AXIS_NAME.test(name))
    throw new AuthorError(
      `axis name "${name}" is invalid; expected a letter or "_" followed by letters, digits or "_"`,
    );
  const other = declaredAxes(doc).get(name);
  if (other && other.id !== self)
    throw new AuthorError(`axis "${name}" is already declared; choose another name`);
  const length = input.length;
  if (length !== null && (!Number.isInteger(length) || length < 1)) {
    throw new AuthorError(
      `axis "${name}" length "${length}" is invalid; expected an integer >= 1, or empty for not yet bound`,
    );
  }
  const roles = input.roles ?? [];
  for (const role of roles) {
    if (!(ROLES as readonly string[]).includes(role))
      throw new AuthorError(
        `axis "${name}" role "${role}" is not known; expected one of ${q(ROLES)}`,
      );
  }
  return roles.length ? { name, length, roles } : { name, length };
}

export function declareAxis(doc: LoomDocument, input: AxisInput): EditOp[] {
  const body = checkAxis(doc, input);
  return [
    { op: "add_node", node: { id: uuid(), type: AXIS, label: body.name, body: { ...body } } },
  ];
}

/**
 * Change an axis's name, length or roles: the server's ``set_axis`` rule (axisRename.ts; the
 * shared cases of tests/core/axis_rename_cases.json), refused in the server's words. The editor
 * also resizes the tensors that use the axis and re-derives what reads them (the server's
 * ``set_axis`` leaves that to the checker).
 */
export function editAxis(doc: LoomDocument, id: string, input: AxisInput): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== AXIS) throw new AuthorError(`node "${id}" is not an axis`);
  const oldName = String(node.body.name);
  const name = input.name.trim();
  const refusal = axisEditRefusal(new Set(declaredAxes(doc).keys()), oldName, name, input.length);
  if (refusal) throw new AuthorError(refusal);
  const roles = checkAxis(doc, { ...input, name }, id).roles ?? null;
  // the label follows the name where it was the name; an unbound length is written as null,
  // which a merge patch cannot do: the Axis is replaced (moving to the end), as the server does
  const label = name !== oldName && node.label === oldName ? { label: name } : {};
  const ops: EditOp[] = [];
  if (input.length === null) {
    const body: Record<string, unknown> = { ...node.body, name, length: null, roles };
    if (!roles) delete body.roles;
    ops.push({ op: "remove_node", id }, { op: "add_node", node: { ...node, ...label, body } });
  } else ops.push({ op: "update_node", id, ...label, body: { name, length: input.length, roles } });
  const declared = declaredAxes(applyOps(doc, ops));
  const touched: string[] = [];
  for (const n of doc.nodes) {
    const update: EditOp & { op: "update_node" } = { op: "update_node", id: n.id };
    const tags: Record<string, unknown> = {};
    const url = n.type === TENSOR ? TENSOR_AXES : n.type === OPERATION ? INDEX_AXES : null;
    const axes = url && (n.tags?.[url] as { axes?: unknown } | undefined)?.axes;
    if (url && Array.isArray(axes)) {
      const renamed = axes.map((a) => renameRef(a, oldName, name));
      if (renamed.some((a, i) => a !== axes[i])) tags[url] = { axes: renamed };
      const range = n.type === TENSOR ? rangeFor(renamed, declared, tensorRange(n)?.start) : null;
      if (range && !same(range, tensorRange(n))) {
        update.body = { range };
        touched.push(n.id);
      }
    }
    if (Object.keys(tags).length) update.tags = tags;
    const params = n.type === OPERATION ? renamedParams(n.body.params, oldName, name) : undefined;
    if (params !== undefined && !same(params, n.body.params)) {
      // a merge patch would merge a map's old keys back in: params are replaced whole
      ops.push(
        { ...update, body: { params: null } },
        { op: "update_node", id: n.id, body: { params } },
      );
    } else if (update.body || update.tags) ops.push(update);
  }
  return [...ops, ...rederive(applyOps(doc, ops), touched)];
}

function safeBase(ref: string): string[] {
  try {
    return baseNames(ref);
  } catch {
    return [];
  }
}

export function removeAxis(doc: LoomDocument, id: string): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== AXIS) throw new AuthorError(`node "${id}" is not an axis`);
  const name = String(node.body.name);
  const users = doc.nodes.filter(
    (n) => n.type === TENSOR && (tensorAxes(n) ?? []).some((a) => safeBase(a).includes(name)),
  );
  if (users.length)
    throw new AuthorError(
      `axis "${name}" is used by ${q(users.map((u) => u.label ?? u.id))}; change or delete those tensors first`,
    );
  return [{ op: "remove_node", id }];
}

// --- tensors ----------------------------------------------------------------------------------

function rangeFor(axes: string[], declared: Declared, start?: number[]): Range | null {
  const lengths = axes.map((a) => {
    try {
      return refLength(a, declared);
    } catch {
      return null;
    }
  });
  if (lengths.some((l) => l === null)) return null;
  const s = start && start.length === axes.length ? start : axes.map(() => 0);
  return { start: s, end: s.map((x, i) => x + lengths[i]!) };
}

/** Parse "H, W-1" into canonical references, each declared with a length. */
export function checkTensorAxes(doc: LoomDocument, refs: string[]): string[] {
  const declared = declaredAxes(doc);
  const out: string[] = [];
  for (const text of refs) {
    let ref: string;
    try {
      ref = canonical(text);
    } catch (e) {
      throw new AuthorError((e as InferenceError).message);
    }
    for (const name of baseNames(ref)) {
      const axis = declared.get(name);
      if (!axis)
        throw new AuthorError(
          `axis "${name}" is not declared; expected one of ${q(declared.keys())}, or declare it in the axes panel`,
        );
      if (axis.length === null)
        throw new AuthorError(
          `axis "${name}" has no length yet; give it one in the axes panel before a tensor uses it`,
        );
    }
    if (out.includes(ref))
      throw new AuthorError(
        `axis "${ref}" appears twice in (${refs.join(", ")}); the axes of a tensor are duplicate-free`,
      );
    out.push(ref);
  }
  return out;
}

export function splitRefs(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface TensorInput {
  label: string;
  axes: string[];
  dtype?: string;
  at?: Point;
}

export function addTensor(doc: LoomDocument, input: TensorInput): { ops: EditOp[]; id: string } {
  const axes = checkTensorAxes(doc, input.axes);
  const range = rangeFor(axes, declaredAxes(doc))!;
  const id = uuid();
  const tags: Record<string, unknown> = { [TENSOR_AXES]: { axes } };
  if (input.at) tags[LAYOUT] = { x: Math.round(input.at.x), y: Math.round(input.at.y) };
  const node: LoomNode = {
    id,
    type: TENSOR,
    body: { dtype: input.dtype ?? "float32", range },
    tags,
  };
  if (input.label.trim()) node.label = input.label.trim();
  return { ops: [{ op: "add_node", node }], id };
}

/** Give a tensor other axes: its range follows, and so do the operations that read it. */
export function setTensorAxes(doc: LoomDocument, id: string, refs: string[]): EditOp[] {
  const node = nodeById(doc).get(id);
  if (!node || node.type !== TENSOR) throw new AuthorError(`node "${id}" is not a tensor`);
  const axes = checkTensorAxes(doc, refs);
  const range = rangeFor(axes, declaredAxes(doc), tensorRange(node)?.start)!;
  const ops: EditOp[] = [
    { op: "update_node", id, body: { range }, tags: { [TENSOR_AXES]: { axes } } },
  ];
  return [...ops, ...rederive(applyOps(doc, ops), [id])];
}

// --- operations -------------------------------------------------------------------------------

/** Infix symbols of the kernels whose results read best as a formula. */
const INFIX: Record<string, string> = {
  "op:dot": "·",
  "op:add": "+",
  "op:subtract": "-",
  "op:multiply": "*",
  "op:divide": "/",
};

/** ``base``, or ``base 2``, ``base 3``... : the first label no node of ``doc`` has. */
export function uniqueLabel(doc: LoomDocument, base: string): string {
  const taken = new Set(doc.nodes.map((n) => n.label));
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base} ${i}`)) return `${base} ${i}`;
}

/** A new operation output's label, from its operands' labels: "x·w1", "a+b", "relu(h)",
 * "sum(x)" (a long one falls back to "dot_out"), unique in ``doc``. */
export function outputLabel(
  doc: LoomDocument,
  kernel: string,
  operands: readonly string[],
): string {
  const short = kernel.replace(/^op:/, "");
  const symbol = INFIX[kernel];
  const formula =
    symbol && operands.length >= 2 ? operands.join(symbol) : `${short}(${operands.join(", ")})`;
  return uniqueLabel(doc, formula.length <= 32 ? formula : `${short}_out`);
}

export function addOperation(
  doc: LoomDocument,
  kernel: string,
  at?: Point,
  connect: string[] = [],
): { ops: EditOp[]; id: string } {
  const k = CATALOGUE.get(kernel);
  if (!k || !k.named)
    throw new AuthorError(
      `kernel "${kernel}" is not in the catalogue; expected one of ("op:add", "op:dot", ...)`,
    );
  const id = uuid();
  const tags: Record<string, unknown> = {};
  if (at) tags[LAYOUT] = { x: Math.round(at.x), y: Math.round(at.y) };
  // labelled by its kernel, told apart from the graph's other ones ("op:dot 2"), so that
  // messages and panels can name it
  const node: LoomNode = {
    id,
    type: OPERATION,
    label: uniqueLabel(doc, kernel),
    body: { kernel, inputs: {}, outputs: {} },
    tags,
  };
  let ops: EditOp[] = [{ op: "add_node", node }];
  for (const tensorId of connect) ops = [...ops, ...connectInput(applyOps(doc, ops), tensorId, id)];
  return { ops, id };
}

/** The IO key a new input of ``op`` goes to: the first required key still empty (x, then y). */
export function nextPort(op: LoomNode): string | null {
  const k = CATALOGUE.get(String(op.body.kernel));
  if (!k) return null;
  const inputs = selections(op.body.inputs);
  if (k.variadic) return k.inputs[0]!;
  return k.inputs.find((key) => !inputs.get(key)?.length) ?? null;
}

/**
 * Connect ``tensorId`` to the next free input of ``opId``. When the op then has all its
 * inputs, its output tensor is inferred and created (or updated). A connection whose axes the
 * kernel refuses is refused here, before anything is sent, with the kernel's own message;
 * except while the op has no params yet and the kernel asks for them (slice, pad, flatten,
 * conv2d and the relabelling views need params): the inputs come first, the inspector then
 * shows what the params must say, and writing them derives the output.
 */
export function connectInput(doc: LoomDocument, tensorId: string, opId: string): EditOp[] {
  const nodes = nodeById(doc);
  const tensor = nodes.get(tensorId);
  const op = nodes.get(opId);
  if (!tensor || tensor.type !== TENSOR)
    throw new AuthorError(
      `only a tensor can be an input; "${tensor?.label ?? tensorId}" is not a tensor`,
    );
  if (!op || op.type !== OPERATION)
    throw new AuthorError(`inputs connect to an operation; "${op?.label ?? opId}" is not one`);
  const outputs = selections(op.body.outputs).get("result") ?? [];
  if (outputs.some((s) => s.tensorId === tensorId))
    throw new AuthorError(
      `"${tensor.label ?? tensorId}" is the output of ${op.body.kernel}; it cannot also be its input`,
    );
  const port = nextPort(op);
  if (port === null)
    throw new AuthorError(`${op.body.kernel} has all its inputs; delete one to connect another`);
  const range = tensorRange(tensor);
  if (!range) throw new AuthorError(`tensor "${tensor.label ?? tensorId}" has no range`);
  const current = selections(op.body.inputs).get(port) ?? [];
  const ops: EditOp[] = [
    {
      op: "update_node",
      id: opId,
      body: { inputs: { [port]: [...current, { tensorId, range }] } },
    },
  ];
  const next = applyOps(doc, ops);
  const derived = deriveOperation(next, opId);
  if (
    derived.inference.kind === "error" &&
    !(derived.inference.type === "KernelError" && noParams(op))
  ) {
    throw new AuthorError(
      `cannot connect "${tensor.label ?? "tensor"}" to ${op.body.kernel} as "${port}": ${derived.inference.message}`,
    );
  }
  return [...ops, ...derived.ops];
}

function noParams(op: LoomNode): boolean {
  const p = op.body.params;
  return p === undefined || p === null || (typeof p === "object" && Object.keys(p).length === 0);
}

/** What ``kernel`` infers for an operation's current inputs (the "missing input" errors included). */
export function inferOperation(doc: LoomDocument, op: LoomNode): Inference {
  const nodes = nodeById(doc);
  const inputs: Record<string, string[][]> = {};
  for (const [key, list] of selections(op.body.inputs)) {
    inputs[key] = list.map((s) => tensorAxes(nodes.get(s.tensorId)) ?? []);
  }
  return inferAxes(CATALOGUE, String(op.body.kernel), inputs, op.body.params, declaredAxes(doc));
}

function complete(op: LoomNode): boolean {
  const k = CATALOGUE.get(String(op.body.kernel));
  if (!k) return false;
  const inputs = selections(op.body.inputs);
  return k.inputs.every(
    (key) => k.optional.includes(key) || (inputs.get(key)?.length ?? 0) > (k.variadic ? 1 : 0),
  );
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The ops that bring an operation's output tensor and derived tags in line with its inputs: the
 * output has the inferred axes, IndexAxes, IPFIndex and IPFSignature are the derived ones (as
 * geon.core.ops derives them: offsets from the tensors' range starts), and each selection is
 * what the op reads or writes (ops.py ``Inference.selections``, as the builder writes it): the
 * whole tensor for most kernels, a slice's window. Until inference succeeds the selections
 * cover the whole input tensors and nothing else changes (the server reports the issue).
 */
export function deriveOperation(
  doc: LoomDocument,
  opId: string,
): { ops: EditOp[]; inference: Inference; output?: string } {
  const nodes = nodeById(doc);
  const op = nodes.get(opId)!;
  const ops: EditOp[] = [];
  const held: Record<string, Selection[]> = {};
  const inputs: Record<string, Selection[]> = {};
  for (const [key, list] of selections(op.body.inputs)) {
    held[key] = list.map((s) => ({ tensorId: s.tensorId, range: s.range }));
    inputs[key] = list.map((s) => ({
      tensorId: s.tensorId,
      range: tensorRange(nodes.get(s.tensorId)) ?? s.range,
    }));
  }
  const select = (want: Record<string, Selection[]>): void => {
    if (!same(want, held)) ops.unshift({ op: "update_node", id: opId, body: { inputs: want } });
  };
  if (!complete(op)) {
    select(inputs);
    return { ops, inference: { kind: "server" } };
  }
  const inference = inferOperation(doc, op);
  if (inference.kind !== "ok") {
    select(inputs);
    return { ops, inference };
  }
  const declared = declaredAxes(doc);
  const current = (selections(op.body.outputs).get("result") ?? [])[0];
  const outNode = current ? nodes.get(current.tensorId) : undefined;
  const outRange = rangeFor(
    inference.result,
    declared,
    outNode ? tensorRange(outNode)?.start : undefined,
  );
  const extent = inference.index.map((r) => refLength(r, declared));
  if (!outRange || extent.some((n) => n === null)) {
    select(inputs);
    return { ops, inference };
  }
  // the operands in the kernel's order (x before y whatever order the document lists them in)
  const seen = new Map<string, number>();
  const read = inference.operands.map((o) => {
    const pos = seen.get(o.key) ?? 0;
    seen.set(o.key, pos + 1);
    return inputs[o.key]![pos]!;
  });
  let outId = outNode?.id;
  if (!outNode) {
    outId = uuid();
    const label = outputLabel(
      doc,
      String(op.body.kernel),
      read.map((s) => nodes.get(s.tensorId)?.label ?? "?"),
    );
    const dtype = String(
      nodes.get(Object.values(inputs)[0]?.[0]?.tensorId ?? "")?.body.dtype ?? "float32",
    );
    const tags: Record<string, unknown> = { [TENSOR_AXES]: { axes: inference.result } };
    const at = op.tags?.[LAYOUT] as Point | undefined;
    if (at) tags[LAYOUT] = { x: at.x + 200, y: at.y };
    ops.push({
      op: "add_node",
      node: { id: outId, type: TENSOR, label, body: { dtype, range: outRange }, tags },
    });
  } else if (
    !same(tensorAxes(outNode), inference.result) ||
    !same(tensorRange(outNode), outRange)
  ) {
    ops.push({
      op: "update_node",
      id: outNode.id,
      body: { range: outRange },
      tags: { [TENSOR_AXES]: { axes: inference.result } },
    });
  }
  const ranges = [...read.map((s) => s.range), outRange];
  const signature = deriveSignature(
    inference,
    declared,
    ranges.map((r) => r.start),
  );
  const windows = deriveSelections(signature, extent as number[], ranges);
  const want: Record<string, Selection[]> = {};
  for (const key of Object.keys(inputs)) want[key] = [];
  read.forEach((s, i) =>
    want[inference.operands[i]!.key]!.push({ tensorId: s.tensorId, range: windows[i]! }),
  );
  select(want);
  const tags = {
    [INDEX_AXES]: { axes: inference.index },
    [IPF_INDEX]: { start: inference.index.map(() => 0), end: extent },
    [IPF_SIGNATURE]: signature,
  };
  const outputs = { result: [{ tensorId: outId!, range: windows[windows.length - 1]! }] };
  const opTags = op.tags ?? {};
  if (
    !same(outputs, op.body.outputs) ||
    Object.entries(tags).some(([k, v]) => !same(opTags[k], v))
  ) {
    ops.push({ op: "update_node", id: opId, body: { outputs }, tags });
  }
  return { ops, inference, output: outId };
}

/** Re-derive every operation downstream of the changed tensors, in data-flow order. */
export function rederive(doc: LoomDocument, changed: string[]): EditOp[] {
  const ops: EditOp[] = [];
  let current = doc;
  const queue = [...changed];
  const done = new Set<string>();
  while (queue.length) {
    const tensorId = queue.shift()!;
    for (const op of current.nodes) {
      if (op.type !== OPERATION || done.has(op.id)) continue;
      const reads = [...selections(op.body.inputs).values()].some((list) =>
        list.some((s) => s.tensorId === tensorId),
      );
      if (!reads) continue;
      done.add(op.id);
      const derived = deriveOperation(current, op.id);
      if (derived.ops.length) {
        ops.push(...derived.ops);
        current = applyOps(current, derived.ops);
        if (derived.output) queue.push(derived.output);
      }
    }
  }
  return ops;
}

// --- general ----------------------------------------------------------------------------------

export function moveNodes(doc: LoomDocument, positions: Map<string, Point>): EditOp[] {
  const nodes = nodeById(doc);
  return [...positions]
    .filter(([id]) => nodes.has(id))
    .map(([id, p]) => ({
      op: "update_node",
      id,
      tags: { [LAYOUT]: { x: Math.round(p.x), y: Math.round(p.y) } },
    }));
}

export function renameNode(doc: LoomDocument, id: string, label: string): EditOp[] {
  if (!nodeById(doc).has(id)) throw new AuthorError(`node "${id}" does not exist`);
  return [{ op: "update_node", id, label: label.trim() || null }];
}

/**
 * Delete nodes. A deleted tensor leaves the operations that read or write it; a deleted
 * operation takes its applications along; a deleted axis must be unused.
 */
export function deleteNodes(doc: LoomDocument, ids: string[]): EditOp[] {
  const nodes = nodeById(doc);
  const gone = new Set(ids.filter((id) => nodes.has(id)));
  for (const n of doc.nodes)
    if (n.type === APPLICATION && gone.has(String(n.body.operationId))) gone.add(n.id);
  const ops: EditOp[] = [];
  let current = doc;
  for (const id of gone) {
    const n = nodes.get(id)!;
    if (n.type === AXIS) {
      const stillUsed = current.nodes.filter(
        (t) =>
          t.type === TENSOR &&
          !gone.has(t.id) &&
          (tensorAxes(t) ?? []).some((a) => safeBase(a).includes(String(n.body.name))),
      );
      if (stillUsed.length)
        throw new AuthorError(
          `axis "${String(n.body.name)}" is used by ${q(stillUsed.map((u) => u.label ?? u.id))}; change or delete those tensors first`,
        );
    }
  }
  for (const op of doc.nodes) {
    if (op.type !== OPERATION || gone.has(op.id)) continue;
    const patch: Record<string, unknown> = {};
    for (const side of ["inputs", "outputs"] as const) {
      const sel = selections(op.body[side]);
      const kept: Record<string, Selection[] | null> = {};
      let changed = false;
      for (const [key, list] of sel) {
        const left = list.filter((s) => !gone.has(s.tensorId));
        if (left.length !== list.length) {
          changed = true;
          kept[key] = left.length ? left : null;
        }
      }
      if (changed) patch[side] = kept;
    }
    if (Object.keys(patch).length) ops.push({ op: "update_node", id: op.id, body: patch });
  }
  current = applyOps(current, ops);
  // referrers go first (issue 36): an application before its operation, an operation before
  // the tensors it reads and writes, so the server never sees a node removed while a node
  // not yet removed still names it; one edit, undone as one
  const rank = (id: string): number => {
    const type = nodes.get(id)!.type;
    return type === APPLICATION
      ? 0
      : type === OPERATION
        ? 1
        : type === TENSOR
          ? 3
          : type === AXIS
            ? 4
            : 2;
  };
  for (const id of [...gone].sort((a, b) => rank(a) - rank(b))) ops.push({ op: "remove_node", id });
  return ops;
}
