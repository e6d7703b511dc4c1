// Integer index spaces in the editor: ranges, affine maps and index projection functions (IPFs),
// mirrored from geon.core.zspace (DESIGN.md §4) and tested on cases that Python computes
// (tests/core/ipf_cases.json, written by tests/core/test_ipf_cases.py). An IPF ``(P, o, s)``
// maps an index point ``i`` to ``[P·i + o, P·i + o + s)`` and an index range to the bounding box
// of the images of all its points, over every corner; an empty range maps to the empty range at
// ``P·a + o``. This is the editor's one copy of both rules of §4: the projection (IPF.range) and
// the clip of a read to its tensor (selectionOf); the signature derivation (infer/inference.ts)
// and the projection window (projection.ts) call them. Error messages are the server's, word for
// word.

export class ShapeError extends Error {}
export class SplitError extends Error {}

const fmt = (values: readonly number[]): string => `[${values.join(", ")}]`;

function ints(values: readonly unknown[], what: string): number[] {
  return values.map((v) => {
    if (typeof v !== "number" || !Number.isInteger(v))
      throw new ShapeError(`${what} has entry "${String(v)}"; expected integers`);
    return v;
  });
}

/** A half-open box ``[start, end)``; ``start <= end`` in every dim. Values, never changed. */
export class ZRange {
  readonly start: readonly number[];
  readonly end: readonly number[];

  constructor(start: readonly number[], end: readonly number[]) {
    const s = ints(start, "range start");
    const e = ints(end, "range end");
    if (s.length !== e.length) {
      throw new ShapeError(
        `range has start "${fmt(s)}" of rank ${s.length} and end "${fmt(e)}" of rank ${e.length}; expected equal ranks`,
      );
    }
    s.forEach((a, d) => {
      if (a > e[d]!)
        throw new ShapeError(
          `range has start "${fmt(s)}" after end "${fmt(e)}" in dim ${d}; expected start <= end`,
        );
    });
    this.start = s;
    this.end = e;
  }

  static fromShape(shape: readonly number[], start?: readonly number[]): ZRange {
    const st = start ?? shape.map(() => 0);
    return new ZRange(
      st,
      st.map((a, d) => a + shape[d]!),
    );
  }

  static fromJson(data: { start: readonly number[]; end: readonly number[] }): ZRange {
    return new ZRange(data.start, data.end);
  }

  toJson(): { start: number[]; end: number[] } {
    return { start: [...this.start], end: [...this.end] };
  }

  get rank(): number {
    return this.start.length;
  }

  get shape(): number[] {
    return this.start.map((a, d) => this.end[d]! - a);
  }

  get size(): number {
    return this.shape.reduce((n, w) => n * w, 1);
  }

  get isEmpty(): boolean {
    return this.start.some((a, d) => a === this.end[d]);
  }

  equals(other: ZRange): boolean {
    return (
      this.rank === other.rank &&
      this.start.every((a, d) => a === other.start[d] && this.end[d] === other.end[d])
    );
  }

  toString(): string {
    return `[${this.start.map((a, d) => `${a}:${this.end[d]}`).join(", ")}]`;
  }

  private sameRank(rank: number, what: string): void {
    if (rank !== this.rank)
      throw new ShapeError(
        `${what} of rank ${rank} cannot be compared with range "${this}" of rank ${this.rank}; expected equal ranks`,
      );
  }

  /** Whether a range (an empty one lies in any range of its rank) or a point lies inside. */
  contains(other: ZRange | readonly number[]): boolean {
    if (other instanceof ZRange) {
      this.sameRank(other.rank, "range");
      if (
        this.start.every((a, d) => a <= other.start[d]!) &&
        this.end.every((b, d) => b >= other.end[d]!)
      )
        return true;
      return other.isEmpty;
    }
    this.sameRank(other.length, "point");
    return other.every((c, d) => this.start[d]! <= c && c < this.end[d]!);
  }

  /** The common box, or null when they share no cell. */
  intersection(other: ZRange): ZRange | null {
    this.sameRank(other.rank, "range");
    const start = this.start.map((a, d) => Math.max(a, other.start[d]!));
    const end = this.end.map((b, d) => Math.min(b, other.end[d]!));
    if (start.some((a, d) => a >= end[d]!)) return null;
    return new ZRange(start, end);
  }

  /** Cut to ``bounds``: the common box, or an empty range at the nearest edge of ``bounds``
   * (what a padded read selects of its tensor: cells outside it are zeros, not reads). */
  clip(bounds: ZRange): ZRange {
    this.sameRank(bounds.rank, "range");
    const start: number[] = [];
    const end: number[] = [];
    this.start.forEach((a, d) => {
      const lo = bounds.start[d]!;
      const hi = bounds.end[d]!;
      const s = Math.min(Math.max(a, lo), hi);
      start.push(s);
      end.push(Math.max(s, Math.min(this.end[d]!, hi)));
    });
    return new ZRange(start, end);
  }

  /** Cut along ``dim`` into contiguous pieces, by exactly one of chunk, sizes or parts (as the server). */
  split(dim: number, by: { chunk?: number; sizes?: number[]; parts?: number }): ZRange[] {
    const given = (["chunk", "sizes", "parts"] as const).filter((k) => by[k] !== undefined);
    if (given.length !== 1)
      throw new SplitError(
        `split needs exactly one of chunk, sizes or parts; got ${given.length ? given.join(", ") : "none"}`,
      );
    if (!Number.isInteger(dim) || dim < 0 || dim >= this.rank) {
      throw new SplitError(
        `dim "${dim}" is out of range for range "${this}" of rank ${this.rank}; expected 0 <= dim < ${this.rank}`,
      );
    }
    const length = this.end[dim]! - this.start[dim]!;
    let widths: number[];
    if (by.chunk !== undefined) {
      const chunk = by.chunk;
      if (!Number.isInteger(chunk) || chunk < 1)
        throw new SplitError(
          `chunk "${chunk}" for dim ${dim} of length ${length} is invalid; expected an integer >= 1`,
        );
      if (length === 0) return [this];
      widths = [];
      for (let a = 0; a < length; a += chunk) widths.push(Math.min(chunk, length - a));
    } else if (by.parts !== undefined) {
      const parts = by.parts;
      if (!Number.isInteger(parts) || parts < 1)
        throw new SplitError(
          `parts "${parts}" for dim ${dim} of length ${length} is invalid; expected an integer >= 1`,
        );
      const base = Math.floor(length / parts);
      const extra = length % parts;
      widths = Array.from({ length: parts }, (_, i) => base + (i < extra ? 1 : 0));
    } else {
      widths = [...by.sizes!];
      if (widths.some((w) => !Number.isInteger(w) || w < 0))
        throw new SplitError(
          `sizes "${fmt(widths)}" for dim ${dim} are invalid; expected integers >= 0`,
        );
      const sum = widths.reduce((a, b) => a + b, 0);
      if (sum !== length)
        throw new SplitError(
          `sizes "${fmt(widths)}" for dim ${dim} sum to ${sum}; expected them to sum to the length ${length} of ${this}`,
        );
    }
    const out: ZRange[] = [];
    let pos = this.start[dim]!;
    for (const w of widths) {
      const start = [...this.start];
      const end = [...this.end];
      start[dim] = pos;
      end[dim] = pos + w;
      out.push(new ZRange(start, end));
      pos += w;
    }
    return out;
  }
}

/** ``x -> P·x + o``; rows of ``P`` are output dims, columns are input dims. */
export class ZAffineMap {
  readonly projection: readonly (readonly number[])[];
  readonly offset: readonly number[];
  readonly inDim: number | null;

  constructor(
    projection: readonly (readonly number[])[],
    offset?: readonly number[],
    inDim: number | null = null,
  ) {
    const rows = projection.map((row) => ints(row, "projection row"));
    const widths = [...new Set(rows.map((r) => r.length))].sort((a, b) => a - b);
    if (widths.length > 1) {
      throw new ShapeError(
        `projection "[${rows.map(fmt).join(", ")}]" has rows of lengths ${fmt(widths)}; expected every row to have the same length`,
      );
    }
    const cols = widths.length ? widths[0]! : inDim;
    if (inDim !== null && cols !== inDim)
      throw new ShapeError(`projection has ${cols} columns; expected ${inDim} (the index rank)`);
    const off = offset !== undefined ? ints(offset, "offset") : rows.map(() => 0);
    if (off.length !== rows.length) {
      throw new ShapeError(
        `offset "${fmt(off)}" has ${off.length} entries; expected ${rows.length} (one per projection row)`,
      );
    }
    this.projection = rows;
    this.offset = off;
    this.inDim = cols;
  }

  get outDim(): number {
    return this.projection.length;
  }

  apply(point: readonly number[]): number[] {
    if (this.inDim !== null && point.length !== this.inDim) {
      throw new ShapeError(
        `point "${fmt(point)}" has rank ${point.length}; expected ${this.inDim} (the number of projection columns)`,
      );
    }
    return this.projection.map(
      (row, r) => this.offset[r]! + row.reduce((sum, k, c) => sum + k * point[c]!, 0),
    );
  }
}

/** The JSON form of an IPF in an ``IPFSignature`` tag. */
export interface IpfJson {
  affineMap: { projection: number[][]; offset: number[] };
  shape: number[];
}

/** The JSON form of an ``IPFSignature`` tag: per IO key, one IPF per selection. */
export interface SignatureJson {
  inputs: Record<string, IpfJson[]>;
  outputs: Record<string, IpfJson[]>;
}

/** An index projection function ``(P, o, s)``: index point ``i`` -> ``[P·i+o, P·i+o+s)``. */
export class IPF {
  readonly map: ZAffineMap;
  readonly shape: readonly number[];

  constructor(
    projection: readonly (readonly number[])[],
    offset?: readonly number[],
    shape?: readonly number[],
  ) {
    this.map = new ZAffineMap(projection, offset);
    const sh = shape !== undefined ? ints(shape, "shape") : this.map.projection.map(() => 1);
    if (sh.length !== this.map.outDim) {
      throw new ShapeError(
        `shape "${fmt(sh)}" has ${sh.length} entries; expected ${this.map.outDim} (one per projection row)`,
      );
    }
    if (sh.some((s) => s < 1))
      throw new ShapeError(`shape "${fmt(sh)}" has an entry < 1; expected integers >= 1`);
    this.shape = sh;
  }

  static fromJson(data: unknown): IPF {
    const d = data as Partial<IpfJson> | null;
    if (!d || typeof d !== "object" || !d.affineMap || typeof d.affineMap !== "object") {
      throw new ShapeError(
        `IPF "${JSON.stringify(data)}" is malformed; expected {"affineMap": {"projection", "offset"}, "shape"}`,
      );
    }
    return new IPF(d.affineMap.projection ?? [], d.affineMap.offset, d.shape);
  }

  toJson(): IpfJson {
    return {
      affineMap: {
        projection: this.map.projection.map((r) => [...r]),
        offset: [...this.map.offset],
      },
      shape: [...this.shape],
    };
  }

  get projection(): readonly (readonly number[])[] {
    return this.map.projection;
  }

  get offset(): readonly number[] {
    return this.map.offset;
  }

  /** The footprint of one index point. */
  point(point: readonly number[]): ZRange {
    const base = this.map.apply(point);
    return new ZRange(
      base,
      base.map((b, r) => b + this.shape[r]!),
    );
  }

  /** The bounding box of the footprints of every point of ``r`` (all corners). */
  range(r: ZRange): ZRange {
    const a = r.start;
    const b = r.end;
    if (this.map.inDim !== null && a.length !== this.map.inDim) this.map.apply(a); // raises the rank error
    if (r.isEmpty) {
      const base = this.map.apply(a);
      return new ZRange(base, base);
    }
    const start: number[] = [];
    const end: number[] = [];
    this.map.projection.forEach((row, i) => {
      let lo = this.map.offset[i]!;
      let hi = lo;
      row.forEach((k, c) => {
        const x = k * a[c]!;
        const y = k * (b[c]! - 1);
        lo += Math.min(x, y);
        hi += Math.max(x, y);
      });
      start.push(lo);
      end.push(hi + this.shape[i]!);
    });
    return new ZRange(start, end);
  }

  apply(arg: ZRange | readonly number[]): ZRange {
    return arg instanceof ZRange ? this.range(arg) : this.point(arg);
  }
}

/**
 * What the operand of ``ipf`` selects of its tensor over the index range ``index``
 * (geon.core.zspace.selection_of): the projection of ``index``; for a read, clipped to the
 * tensor's range when one of the same rank is given (a padded read reaches past its tensor: the
 * cells outside are zeros, not reads); for a write, the projection as it is.
 */
export function selectionOf(
  ipf: IPF,
  index: ZRange,
  tensor: ZRange | null,
  { read }: { read: boolean },
): ZRange {
  const footprint = ipf.range(index);
  return read && tensor !== null && tensor.rank === footprint.rank
    ? footprint.clip(tensor)
    : footprint;
}
