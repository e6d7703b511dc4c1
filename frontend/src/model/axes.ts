// Named axes on the client (DESIGN.md §2), as geon.core.axes holds them on the server: axis
// declarations, and references such as "W-1" (a name and a dual level) or a composite "H*W" —
// parsing, the canonical spelling, dual shifts, transposition and lengths. The inference of the
// kernels over these references lives under infer/ (infer/dispatch.ts is its entry point).

import { fail, showInt, showText } from "./infer/messages";

export interface AxisDecl {
  name: string;
  length: number | null;
  roles?: string[];
  cls?: string | null;
  batch?: boolean;
  doc?: string;
}

export type Declared = ReadonlyMap<string, AxisDecl>;

// One part of a reference once trimmed: a name, then an optional dual level. No two quantifiers
// can take the same character (a name holds no whitespace; whitespace only precedes a sign or the
// digits), so matching is linear in the length; the old /^\s*NAME\s*(LEVEL)?\s*$/ split every
// run of spaces every way (quadratic: 0.4 s for 20,000 spaces). As geon.core.axes._REF_PART.
const REF_PART = /^([A-Za-z_][A-Za-z0-9_]*)(?:\s*([+-])\s*([0-9]+))?$/;
/** Characters in one axis reference as written (geon.core.limits.MAX_AXIS_REF_LENGTH). */
export const MAX_AXIS_REF_LENGTH = 1024;
export const AXIS_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RefPart {
  name: string;
  level: number;
}

const parsed = new Map<string, readonly RefPart[]>();

/** "H*W+1" -> [{H, 0}, {W, 1}]; throws an AxisError naming the text when it is not a reference. */
export function parseRef(text: string): readonly RefPart[] {
  let found = parsed.get(text);
  if (!found) {
    found = Object.freeze(parseRefUncached(text).map((p) => Object.freeze(p)));
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(text, found);
  }
  return found;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function parseRefUncached(text: string): RefPart[] {
  if (text.length > MAX_AXIS_REF_LENGTH) {
    fail(
      "AxisError",
      `axis reference "${showText(text)}" is too long; expected at most ${MAX_AXIS_REF_LENGTH} characters`,
    );
  }
  return text.split("*").map((part) => {
    const m = REF_PART.exec(part.trim());
    if (!m) {
      fail(
        "AxisError",
        `axis reference "${text}" is invalid; expected a name with an optional dual level, e.g. "W", "W-1", "W+1", or a composite "H*W"`,
      );
    }
    const big = m[2] === undefined ? 0n : BigInt(m[2] + m[3]!);
    if (big < INT64_MIN || big > INT64_MAX) {
      fail(
        "AxisError",
        `dual level "${showInt(big)}" for axis "${m[1]!}" is out of range; expected an integer from ${INT64_MIN} to ${INT64_MAX}`,
      );
    }
    return { name: m[1]!, level: Number(big) };
  });
}

/** The written form of parsed parts ({W, -1} -> "W-1"; several parts join with "*"). */
export function formatRef(parts: readonly RefPart[]): string {
  return parts
    .map((p) => p.name + (p.level === 0 ? "" : p.level > 0 ? `+${p.level}` : `${p.level}`))
    .join("*");
}

/** The canonical spelling of a reference ("W - 1" -> "W-1"). */
export function canonical(text: string): string {
  return formatRef(parseRef(text));
}

/** The reference ``delta`` dual levels up, part by part ("W", -1 -> "W-1"). */
export function shift(ref: string, delta: number): string {
  return formatRef(parseRef(ref).map((p) => ({ name: p.name, level: p.level + delta })));
}

/** What a reference becomes under x.T: level k -> -1-k ("W" -> "W-1", "W-1" -> "W"). */
export function transposeRef(ref: string): string {
  return formatRef(parseRef(ref).map((p) => ({ name: p.name, level: -1 - p.level })));
}

/** The base axis names a reference uses ("H*W-1" -> ["H", "W"]). */
export function baseNames(ref: string): string[] {
  return parseRef(ref).map((p) => p.name);
}

/** Whether a reference is a composite of several axes ("H*W"). */
export const isComposite = (ref: string): boolean => parseRef(ref).length > 1;

/** The parts of a reference, each written alone ("H*W-1" -> ["H", "W-1"]). */
export function refParts(ref: string): string[] {
  return parseRef(ref).map((part) => formatRef([part]));
}

/** The length of a reference (product for a composite); null when an axis is unbound or unknown. */
export function refLength(ref: string, declared: Declared): number | null {
  let n = 1;
  for (const p of parseRef(ref)) {
    const len = declared.get(p.name)?.length;
    if (len === null || len === undefined) return null;
    n *= len;
  }
  return n;
}
