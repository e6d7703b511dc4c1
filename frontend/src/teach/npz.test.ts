import { describe, expect, it } from "vitest";
import { npy, npz } from "./npz";

const text = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.slice(from, to));

describe("npz (issue 36: a counterexample loaded into a run)", () => {
  it("writes a .npy 1.0 header padded to 64 bytes and the values little-endian", () => {
    const file = npy({ name: "m", dtype: "float64", shape: [1, 2], values: [4, 3] });
    const headerLength = file[8]! + 256 * file[9]!;
    expect(text(file, 1, 6)).toBe("NUMPY");
    expect((10 + headerLength) % 64).toBe(0);
    expect(text(file, 10, 10 + headerLength).trim()).toBe(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2), }",
    );
    const values = new DataView(file.buffer, 10 + headerLength);
    expect([values.getFloat64(0, true), values.getFloat64(8, true)]).toEqual([4, 3]);
    expect(
      text(npy({ name: "v", dtype: "float64", shape: [2], values: [1, 2] }), 10, 80),
    ).toContain("'shape': (2,)");
  });

  it("refuses values that do not fill the shape", () => {
    expect(() => npy({ name: "m", dtype: "float64", shape: [2, 2], values: [1] })).toThrow(
      'array "m" has 1 values for the shape (2, 2)',
    );
  });

  it("stores one member per array, named <label>.npy, with the zip's end record", () => {
    const archive = npz([
      { name: "m", dtype: "float64", shape: [1, 2], values: [4, 3] },
      { name: "v", dtype: "float64", shape: [2], values: [2, -2] },
    ]);
    const view = new DataView(archive.buffer);
    expect(view.getUint32(0, true)).toBe(0x04034b50);
    expect(text(archive, 30, 35)).toBe("m.npy");
    const end = archive.length - 22;
    expect([view.getUint32(end, true), view.getUint16(end + 10, true)]).toEqual([0x06054b50, 2]);
    const central = view.getUint32(end + 16, true);
    expect(view.getUint32(central, true)).toBe(0x02014b50);
  });
});
