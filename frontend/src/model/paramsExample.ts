// A valid params example for an operation's kernel (issue 36), written with the axes of the
// operation's own first input so it can be applied as it stands: the inspector's params box
// shows it as its placeholder ({"reduction_axes": ["W-1"]} for op:sum over (H, W-1)).

import { CATALOGUE } from "./catalogue";

/** The example, or null when the kernel takes no params a person usually writes (a dot) or
 * its params have no one-line example (a slice, a pad). ``input`` are the first input's axes
 * (none connected yet: a sample (H, W-1)); ``result`` the inferred result's axes, if known. */
export function paramsExample(
  kernel: string,
  input: readonly string[],
  result: readonly string[] | null,
): Record<string, unknown> | null {
  const family = CATALOGUE.get(kernel)?.family;
  const axes = input.length ? [...input] : ["H", "W-1"];
  switch (family) {
    case "reduction":
    case "normalization":
      return { reduction_axes: [axes[axes.length - 1]] };
    case "nary":
    case "binary":
      return { axes: [...(result && result.length ? result : axes)] };
    default:
      break;
  }
  if (kernel === "op:cast_axes") return { axes };
  if (kernel === "op:dimshuffle") return { axes: [...axes].reverse() };
  return null;
}

/** What the params box shows while empty: the example, "no params" for a kernel that takes
 * none (an elementwise function, transpose, dot), else a hint to the docs. */
export function paramsPlaceholder(
  kernel: string,
  input: readonly string[],
  result: readonly string[] | null,
): string {
  const example = paramsExample(kernel, input, result);
  if (example) return `e.g. ${JSON.stringify(example)}`;
  const family = CATALOGUE.get(kernel)?.family;
  if (
    (family === "unary" && kernel !== "op:gelu") ||
    kernel === "op:dot" ||
    kernel === "op:transpose"
  )
    return "no params needed";
  return "params as JSON (Help lists each kernel's)";
}
