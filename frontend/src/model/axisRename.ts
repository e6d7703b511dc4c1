// The server's axis edit rule (geon/graphs/edits.py, ``set_axis``), mirrored for the editor's
// axis command: which references a rename rewrites, and the refusals in the server's words (the
// part after "edit op N (set_axis): "). Both sides run tests/core/axis_rename_cases.json.
//
// A rename rewrites every reference to the axis, keeping dual levels and composites (W-1 -> V-1,
// H*W -> H*V): TensorAxes and IndexAxes tags (rewritten, not re-derived, so an operation whose
// inference fails, or a custom kernel's, keeps its index names in step) and the params that name
// axes in geon.core.ops' table; a custom kernel's other params are its own and are kept.

import { AXIS_NAME } from "./axes";

/** Params that are lists of references (slice's and pad's ``axes``: a map, keys and values). */
const PARAM_LISTS = ["axes", "out_axes", "reduction_axes", "along"];
/** Params whose keys are references. */
const PARAM_KEYED = ["slices", "pad"];
/** Params that are one reference. */
const PARAM_REFS = ["axis"];
/** The references of ``parts``. */
const PARAM_PARTS = ["axis", "into"];
const LEVEL_SUFFIX = /[+-][0-9]+$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** An axis reference with axis ``old`` renamed to ``to``; anything else is kept ("HH" too). */
export function renameRef<T>(ref: T, old: string, to: string): T {
  if (typeof ref !== "string") return ref;
  const parts = ref.split("*").map((part) => {
    const m = LEVEL_SUFFIX.exec(part);
    const name = m ? part.slice(0, m.index) : part;
    return (name === old ? to : name) + (m ? m[0] : "");
  });
  return parts.join("*") as T;
}

/** ``params`` with axis ``old`` renamed to ``to`` where the params name axes (a new object). */
export function renamedParams(params: unknown, old: string, to: string): unknown {
  if (!isObject(params)) return params;
  const out: Record<string, unknown> = { ...params };
  const r = <T>(ref: T): T => renameRef(ref, old, to);
  const mapEntries = (v: Record<string, unknown>, values: boolean): Record<string, unknown> =>
    Object.fromEntries(Object.entries(v).map(([k, x]) => [r(k), values ? r(x) : x]));
  for (const key of PARAM_LISTS) {
    const v = out[key];
    if (Array.isArray(v)) out[key] = v.map(r);
    else if (isObject(v)) out[key] = mapEntries(v, true);
  }
  for (const key of PARAM_KEYED)
    if (isObject(out[key])) out[key] = mapEntries(out[key] as Record<string, unknown>, false);
  for (const key of PARAM_REFS) if (key in out) out[key] = r(out[key]);
  const parts = out.parts;
  if (isObject(parts))
    out.parts = Object.fromEntries(
      Object.entries(parts).map(([k, v]) => [k, PARAM_PARTS.includes(k) ? r(v) : v]),
    );
  return out;
}

/** A value as the server's ``quote`` writes it: a string as written, anything else as JSON, cut
 * to 80 characters with "...". */
function quote(v: unknown): string {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return `"${text.length > 80 ? `${text.slice(0, 77)}...` : text}"`;
}

/**
 * Why axis ``name`` cannot be renamed to ``to`` and/or given ``length`` (null: not yet bound),
 * in the order the server checks; null when it can. ``declared`` holds every declared name.
 */
export function axisEditRefusal(
  declared: ReadonlySet<string>,
  name: string,
  to: string,
  length: unknown,
): string | null {
  if (length !== null && (typeof length !== "number" || !Number.isInteger(length) || length < 1)) {
    return `axis ${quote(name)} cannot have length ${quote(length)}; expected an integer >= 1, or null for not yet bound`;
  }
  if (!AXIS_NAME.test(to)) {
    return `axis ${quote(name)} cannot be renamed to ${quote(to)}; expected a name like "H" or "batch_1" (letters, digits, _; not starting with a digit)`;
  }
  if (to !== name && declared.has(to))
    return `axis ${quote(name)} cannot be renamed to ${quote(to)}, which is already declared; pick another name`;
  return null;
}
