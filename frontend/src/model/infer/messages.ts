// The errors and the quoting of the named-axes model's messages, word for word the server's
// (geon.core.errors: AxisError, ShapeError, KernelError; geon.core.limits.show_int and
// show_text for values too long to print whole). Every refusal of axes.ts and of the inference
// rules under infer/ is an InferenceError raised here.

export type ErrorType = "AxisError" | "ShapeError" | "KernelError";

/** A refusal, with the kind of the server's exception that says the same. */
export class InferenceError extends Error {
  constructor(
    readonly kind: ErrorType,
    message: string,
  ) {
    super(message);
  }
}

export function fail(kind: ErrorType, message: string): never {
  throw new InferenceError(kind, message);
}

/** References quoted for a message: ("H", "W-1"). */
export const quoted = (items: Iterable<string>): string =>
  `(${[...items].map((i) => `"${i}"`).join(", ")})`;

/** Axes as a tensor's axes are written: (H, W-1). */
export const formatAxes = (items: Iterable<string>): string => `(${[...items].join(", ")})`;

/** Python's repr of a JSON value, as the server's messages quote bad params. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") return `'${value}'`;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `'${k}': ${pyRepr(v)}`)
      .join(", ")}}`;
  }
  return String(value);
}

/** An integer for a message: as written when short, else its leading digits and length (geon.core.limits.show_int). */
export function showInt(value: bigint): string {
  const digits = (value < 0n ? -value : value).toString();
  return digits.length <= 20
    ? value.toString()
    : `${value < 0n ? "-" : ""}${digits.slice(0, 13)}... (${digits.length} digits)`;
}

/** ``text`` for a message: as written when short, else its start and length (geon.core.limits.show_text). */
export function showText(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}... (${text.length} characters)`;
}
