// A plan typed by hand (DESIGN.md §4): the mapping form's mesh ("dp=2, tp=4"), axis mapping
// ("N=dp, F=tp") and where inputs live ("x: N=dp; w1: replicated"), parsed with errors that
// name the bad part, and written back from a plan to the same texts.

import type { InputLayout, Mesh, Plan } from "./plans";

/** The error of a plan typed by hand (mesh or mapping), naming the bad part. */
export class PlanTextError extends Error {}

const PAIR = /^\s*([A-Za-z_][\w]*)\s*(?:=|→|->|:)\s*([^\s,]+)\s*$/;

/** Pairs ``a=b`` (or ``a→b``, ``a: b``) separated by commas; ``what`` names them in errors. */
function pairs(text: string, what: string, example: string): [string, string][] {
  const parts = text.split(",").filter((p) => p.trim() !== "");
  if (!parts.length) throw new PlanTextError(`the ${what} is empty; expected e.g. "${example}"`);
  const seen = new Set<string>();
  return parts.map((part) => {
    const m = PAIR.exec(part);
    if (!m)
      throw new PlanTextError(
        `"${part.trim()}" is not valid in the ${what}; expected name=value, e.g. "${example}"`,
      );
    if (seen.has(m[1]!)) throw new PlanTextError(`"${m[1]}" is given twice in the ${what}`);
    seen.add(m[1]!);
    return [m[1]!, m[2]!];
  });
}

/** A mesh typed as ``dp=2, tp=4`` (mesh axis = size). */
export function parseMesh(text: string, name = "mesh"): Mesh {
  const axes: Record<string, number> = {};
  for (const [axis, size] of pairs(text, "mesh", "dp=2, tp=4")) {
    const n = Number(size);
    if (!Number.isInteger(n) || n < 1)
      throw new PlanTextError(
        `mesh axis "${axis}" has size "${size}"; expected a whole number >= 1`,
      );
    axes[axis] = n;
  }
  return { name, axes };
}

/** An axis mapping typed as ``N=dp, F=tp`` (the graph's axis = a mesh axis of ``mesh``). */
export function parseMapping(text: string, mesh: Mesh): Record<string, string> {
  const mapping: Record<string, string> = {};
  for (const [axis, meshAxis] of pairs(text, "axis mapping", "N=dp, F=tp")) {
    if (!(meshAxis in mesh.axes)) {
      throw new PlanTextError(
        `axis "${axis}" is mapped to "${meshAxis}", which is not a mesh axis; expected one of (${Object.keys(mesh.axes).join(", ")})`,
      );
    }
    mapping[axis] = meshAxis;
  }
  return mapping;
}

/**
 * Where inputs live, typed as ``x: N=dp; w1: replicated; b: device 0,1`` (an input by label, then
 * ``replicated``, its axes over mesh axes, or one device's coordinates); inputs not named are
 * replicated on every device.
 */
export function parseInputs(text: string, mesh: Mesh): Record<string, InputLayout> {
  const found: Record<string, InputLayout> = {};
  for (const entry of text.split(";").filter((e) => e.trim() !== "")) {
    // the last colon: an imported tensor's label may hold colons ("onnx::MatMul_193"); where it lives never does
    const at = entry.lastIndexOf(":");
    const label = entry.slice(0, Math.max(0, at)).trim();
    const where = entry.slice(at + 1).trim();
    if (at < 0 || !label || !where)
      throw new PlanTextError(
        `"${entry.trim()}" is not valid where inputs live; expected label: replicated, label: N=dp or label: device 0,1`,
      );
    if (label in found) throw new PlanTextError(`input "${label}" is placed twice`);
    if (where === "replicated") found[label] = "replicated";
    else if (where.startsWith("device")) {
      const coords = where
        .slice("device".length)
        .split(",")
        .map((c) => Number(c.trim()));
      if (
        coords.length !== Object.keys(mesh.axes).length ||
        coords.some((c) => !Number.isInteger(c) || c < 0)
      ) {
        throw new PlanTextError(
          `input "${label}" is placed on "${where}"; expected a device's ${Object.keys(mesh.axes).length} coordinates on the mesh (${Object.keys(mesh.axes).join(", ")}), e.g. device ${Object.keys(
            mesh.axes,
          )
            .map(() => 0)
            .join(",")}`,
        );
      }
      found[label] = { device: coords };
    } else found[label] = { over: parseMapping(where, mesh) };
  }
  return found;
}

/** A plan as the mapping form's texts (what {@link parseMesh}, {@link parseMapping} and
 * {@link parseInputs} read back to the same plan): "dp=2, tp=4", "N=dp, F=tp", "x: N=dp; w1: replicated". */
export function planTexts(plan: Plan): { mesh: string; mapping: string; inputs: string } {
  const pairsText = (m: Record<string, string | number>): string =>
    Object.entries(m)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ");
  const where = (layout: InputLayout): string =>
    layout === "replicated"
      ? "replicated"
      : "device" in layout
        ? `device ${layout.device.join(",")}`
        : pairsText(layout.over);
  return {
    mesh: pairsText(plan.mesh.axes),
    mapping: pairsText(plan.axisMapping ?? {}),
    inputs: Object.entries(plan.inputs ?? {})
      .map(([label, layout]) => `${label}: ${where(layout)}`)
      .join("; "),
  };
}
