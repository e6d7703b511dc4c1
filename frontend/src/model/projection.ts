// What the projection window shows of one operation: its index space (IPFIndex, named by
// IndexAxes), its applications, and per input and output the IPF of its IPFSignature, with the
// region that an index point or an application selects (all corners; inputs clipped to the
// tensor as the server's checker clips a padded read: ipf.ts's IPF.range and selectionOf, the
// editor's one copy of both rules, DESIGN.md §4). For custom kernels (not in the
// catalogue) the IPFs are edited here: the fields are parsed into draft IPFs that move the
// regions live, and committing builds one ordinary edit that writes the signature and
// re-projects the selections of the operation and of its applications.

import { CATALOGUE } from "./catalogue";
import {
  APPLICATION,
  declaredAxes,
  INDEX_AXES,
  IPF_INDEX,
  IPF_SIGNATURE,
  nodeById,
  OPERATION,
  selections,
  tensorAxes,
  tensorRange,
  type LoomDocument,
} from "./document";
import type { EditOp } from "./edits";
import { IPF, selectionOf, ZRange, type SignatureJson } from "./ipf";

export type Side = "inputs" | "outputs";

export interface PortProjection {
  side: Side;
  port: string;
  /** The selection's place in its port's list. */
  position: number;
  /** ``inputs.x.0``: names the IPF in the signature. */
  key: string;
  tensorId: string;
  /** The tensor's label (or its port name when it has none). */
  label: string;
  axes: string[] | null;
  tensorRange: ZRange | null;
  ipf: IPF | null;
  /** Why there is no IPF (missing or malformed in the signature). */
  problem: string | null;
}

export interface OperationProjection {
  opId: string;
  kernel: string;
  /** Not in the catalogue: its IPFs are given in the document and may be edited. */
  custom: boolean;
  indexAxes: string[];
  indexRange: ZRange | null;
  ports: PortProjection[];
  applications: { id: string; index: ZRange }[];
}

export type Pick = { kind: "point"; point: number[] } | { kind: "application"; id: string };

export interface Region {
  key: string;
  /** The footprint of the pick (all corners). */
  raw: ZRange;
  /** What it selects of the tensor: inputs clipped to the tensor's range, outputs as they are. */
  region: ZRange;
  /** Each application's region (the bands; overlapping ones are a halo). */
  bands: { applicationId: string; region: ZRange }[];
  /** Cells that two applications with different regions both read (or write): the halo. */
  overlaps: ZRange[];
  /** Every application selects the same region (a tensor read whole by each: no halo). */
  shared: boolean;
}

function asRange(value: unknown): ZRange | null {
  try {
    const v = value as { start: number[]; end: number[] };
    return v && Array.isArray(v.start) && Array.isArray(v.end) ? new ZRange(v.start, v.end) : null;
  } catch {
    return null;
  }
}

/** The projection view of an operation, or null when ``opId`` is not an operation. */
export function operationProjection(doc: LoomDocument, opId: string): OperationProjection | null {
  const nodes = nodeById(doc);
  const op = nodes.get(opId);
  if (!op || op.type !== OPERATION) return null;
  const kernel = String(op.body.kernel ?? "");
  const named = (op.tags?.[INDEX_AXES] as { axes?: unknown } | undefined)?.axes;
  let indexRange = asRange(op.tags?.[IPF_INDEX]);
  let indexAxes = Array.isArray(named) ? named.map(String) : [];
  if (!indexRange && indexAxes.length) {
    const decl = declaredAxes(doc);
    const lengths = indexAxes.map((a) => decl.get(a)?.length);
    if (lengths.every((n): n is number => typeof n === "number"))
      indexRange = ZRange.fromShape(lengths);
  }
  if (indexRange && indexAxes.length !== indexRange.rank)
    indexAxes = indexRange.start.map((_, i) => `d${i}`);
  const signature = (op.tags?.[IPF_SIGNATURE] ?? {}) as Record<
    Side,
    Record<string, unknown[]> | undefined
  >;
  const ports: PortProjection[] = [];
  for (const side of ["inputs", "outputs"] as const) {
    for (const [port, list] of selections(op.body[side])) {
      list.forEach((sel, position) => {
        const tensor = nodes.get(sel.tensorId);
        const json = signature[side]?.[port]?.[position];
        let ipf: IPF | null = null;
        let problem: string | null = null;
        if (json === undefined)
          problem = `the IPFSignature has no IPF for ${side}.${port}[${position}]`;
        else {
          try {
            ipf = IPF.fromJson(json);
          } catch (e) {
            problem = (e as Error).message;
          }
        }
        ports.push({
          side,
          port,
          position,
          key: `${side}.${port}.${position}`,
          tensorId: sel.tensorId,
          label: tensor?.label ?? port,
          axes: tensorAxes(tensor),
          tensorRange: asRange(tensorRange(tensor)),
          ipf,
          problem,
        });
      });
    }
  }
  const applications: { id: string; index: ZRange }[] = [];
  for (const n of doc.nodes) {
    if (n.type !== APPLICATION || n.body.operationId !== opId) continue;
    const index = asRange(n.tags?.[IPF_INDEX]);
    if (index) applications.push({ id: n.id, index });
  }
  return {
    opId,
    kernel,
    custom: !CATALOGUE.has(kernel),
    indexAxes,
    indexRange,
    ports,
    applications,
  };
}

/** The index range a pick stands for (a point is the range of its one cell). */
export function pickRange(view: OperationProjection, pick: Pick): ZRange | null {
  if (pick.kind === "point")
    return new ZRange(
      pick.point,
      pick.point.map((c) => c + 1),
    );
  return view.applications.find((a) => a.id === pick.id)?.index ?? null;
}

/** What ``port`` selects of its tensor over the index range ``index`` (a read is clipped to it). */
function selected(port: PortProjection, ipf: IPF, index: ZRange): ZRange {
  return selectionOf(ipf, index, port.tensorRange, { read: port.side === "inputs" });
}

/**
 * Per port with an IPF (``drafts`` replaces some by key), the region the pick selects and the
 * bands of every application, with the cells more than one of them covers.
 */
export function regions(
  view: OperationProjection,
  pick: Pick,
  drafts: ReadonlyMap<string, IPF> = new Map(),
): Region[] {
  const at = pickRange(view, pick);
  const out: Region[] = [];
  for (const port of view.ports) {
    const ipf = drafts.get(port.key) ?? port.ipf;
    if (!ipf || !at || (ipf.map.inDim !== null && ipf.map.inDim !== at.rank)) continue;
    const bands = view.applications.map((a) => ({
      applicationId: a.id,
      region: selected(port, ipf, a.index),
    }));
    const overlaps: ZRange[] = [];
    bands.forEach((b, i) => {
      for (const c of bands.slice(i + 1)) {
        if (b.region.equals(c.region)) continue; // the same region, read whole by both: not a halo
        const o = b.region.intersection(c.region);
        if (o) overlaps.push(o);
      }
    });
    const shared = bands.length > 1 && bands.every((b) => b.region.equals(bands[0]!.region));
    out.push({
      key: port.key,
      raw: ipf.range(at),
      region: selected(port, ipf, at),
      bands,
      overlaps,
      shared,
    });
  }
  return out;
}

/** The text fields of one IPF in the editor: the projection's rows, the offset and the shape. */
export interface IpfFields {
  projection: string[][];
  offset: string[];
  shape: string[];
}

export class ProjectionInputError extends Error {}

export function fieldsOf(ipf: IPF): IpfFields {
  return {
    projection: ipf.projection.map((r) => r.map(String)),
    offset: ipf.offset.map(String),
    shape: ipf.shape.map(String),
  };
}

function integer(text: string, what: string, min: number | null): number {
  const t = text.trim();
  const value = /^[+-]?\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isSafeInteger(value))
    throw new ProjectionInputError(
      `${what} is "${text}"; expected an integer${min === null ? "" : ` >= ${min}`}`,
    );
  if (min !== null && value < min)
    throw new ProjectionInputError(`${what} is "${text}"; expected an integer >= ${min}`);
  return value;
}

/** Parse the fields of the IPF of ``port``; a ProjectionInputError names the bad value and what is valid. */
export function parseFields(port: PortProjection, fields: IpfFields): IPF {
  const where = `${port.label} (${port.side === "inputs" ? "input" : "output"} ${port.port})`;
  const projection = fields.projection.map((row, r) =>
    row.map((t, c) => integer(t, `projection row ${r}, column ${c} of ${where}`, null)),
  );
  const offset = fields.offset.map((t, r) => integer(t, `offset ${r} of ${where}`, null));
  const shape = fields.shape.map((t, r) => integer(t, `shape ${r} of ${where}`, 1));
  return new IPF(projection, offset, shape);
}

/**
 * The ops of committing edited IPFs: the operation's IPFSignature, and the selections of the
 * operation and of each application re-projected from their index ranges (inputs clipped to
 * the tensor), so the document stays consistent with the signature. Empty when nothing changes.
 */
export function commitOps(
  doc: LoomDocument,
  view: OperationProjection,
  drafts: ReadonlyMap<string, IPF>,
): EditOp[] {
  const nodes = nodeById(doc);
  const op = nodes.get(view.opId);
  if (!op) return [];
  const ipfOf = (p: PortProjection) => drafts.get(p.key) ?? p.ipf;
  const signature: SignatureJson = { inputs: {}, outputs: {} };
  for (const p of view.ports) {
    const ipf = ipfOf(p);
    if (!ipf) return []; // a malformed IPF that was not edited: the signature cannot be written whole
    (signature[p.side][p.port] ??= []).push(ipf.toJson());
  }
  const reproject = (
    index: ZRange | null,
  ): Record<
    Side,
    Record<string, { tensorId: string; range: { start: number[]; end: number[] } }[]>
  > | null => {
    if (!index) return null;
    const body: Record<
      Side,
      Record<string, { tensorId: string; range: { start: number[]; end: number[] } }[]>
    > = { inputs: {}, outputs: {} };
    for (const p of view.ports) {
      const ipf = ipfOf(p)!;
      if (ipf.map.inDim !== null && ipf.map.inDim !== index.rank) return null;
      (body[p.side][p.port] ??= []).push({
        tensorId: p.tensorId,
        range: selected(p, ipf, index).toJson(),
      });
    }
    return body;
  };
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const ops: EditOp[] = [];
  const opBody = reproject(view.indexRange);
  const patch: EditOp = { op: "update_node", id: op.id };
  if (!same(op.tags?.[IPF_SIGNATURE], signature)) patch.tags = { [IPF_SIGNATURE]: signature };
  const changedSides = (
    body: Record<string, unknown>,
    next: ReturnType<typeof reproject>,
  ): Record<string, unknown> | null => {
    if (!next) return null;
    const out: Record<string, unknown> = {};
    for (const side of ["inputs", "outputs"] as const)
      if (Object.keys(next[side]).length && !same(body[side], next[side])) out[side] = next[side];
    return Object.keys(out).length ? out : null;
  };
  const opChanges = changedSides(op.body, opBody);
  if (opChanges) patch.body = opChanges;
  if (patch.tags || patch.body) ops.push(patch);
  for (const a of view.applications) {
    const node = nodes.get(a.id)!;
    const changes = changedSides(node.body, reproject(a.index));
    if (changes) ops.push({ op: "update_node", id: a.id, body: changes });
  }
  return ops;
}
