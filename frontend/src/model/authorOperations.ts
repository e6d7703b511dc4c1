// Authoring operations: add an operation from the catalogue and connect tensors to its inputs, as
// edit ops (author.ts says how commands are written and refused); the output follows (derive.ts).

import { CATALOGUE } from "./catalogue";
import {
  LAYOUT,
  nodeById,
  OPERATION,
  selections,
  TENSOR,
  tensorRange,
  type LoomDocument,
  type LoomNode,
  type Point,
} from "./document";
import { applyOps, type EditOp } from "./edits";
import { AuthorError, uuid } from "./author";
import { deriveOperation, uniqueLabel } from "./derive";

// --- operations -------------------------------------------------------------------------------
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
