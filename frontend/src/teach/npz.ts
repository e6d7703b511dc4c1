// A NumPy .npz written in the browser (issue 36: a puzzle's counterexample "Load into a run"):
// a zip archive, stored (no compression), of one .npy file (format 1.0) per array, which
// numpy.load and geon's run upload read like one numpy.savez wrote.

/** One array: its name in the archive, its dtype, its shape and its values in C order. */
export interface NpyArray {
  name: string;
  dtype: "float64" | "float32" | "int64" | "int32" | "boolean";
  shape: number[];
  values: readonly (number | boolean)[];
}

const DESCR: Record<NpyArray["dtype"], [string, number]> = {
  float64: ["<f8", 8],
  float32: ["<f4", 4],
  int64: ["<i8", 8],
  int32: ["<i4", 4],
  boolean: ["|b1", 1],
};

let table: Uint32Array | null = null;
function crc32(data: Uint8Array): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** One array as a .npy file: magic, version 1.0, a header padded to a multiple of 64 bytes. */
export function npy(a: NpyArray): Uint8Array {
  const [descr, size] = DESCR[a.dtype];
  const count = a.shape.reduce((p, n) => p * n, 1);
  if (count !== a.values.length)
    throw new Error(
      `array "${a.name}" has ${a.values.length} values for the shape (${a.shape.join(", ")})`,
    );
  const shape = a.shape.length === 1 ? `(${a.shape[0]},)` : `(${a.shape.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
  const out = new Uint8Array(10 + header.length + count * size);
  out.set([
    0x93,
    ...[..."NUMPY"].map((c) => c.charCodeAt(0)),
    1,
    0,
    header.length & 0xff,
    header.length >> 8,
  ]);
  out.set(
    [...header].map((c) => c.charCodeAt(0)),
    10,
  );
  const view = new DataView(out.buffer, 10 + header.length);
  a.values.forEach((v, i) => {
    const x = Number(v);
    if (a.dtype === "float64") view.setFloat64(i * 8, x, true);
    else if (a.dtype === "float32") view.setFloat32(i * 4, x, true);
    else if (a.dtype === "int64") view.setBigInt64(i * 8, BigInt(Math.trunc(x)), true);
    else if (a.dtype === "int32") view.setInt32(i * 4, x, true);
    else view.setUint8(i, x ? 1 : 0);
  });
  return out;
}

/** The arrays as an .npz (a stored zip of ``<name>.npy`` members). */
export function npz(arrays: readonly NpyArray[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  for (const a of arrays) {
    const data = npy(a);
    const name = new TextEncoder().encode(`${a.name}.npy`);
    const crc = crc32(data);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, data.length, true);
    lv.setUint32(22, data.length, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    const entry = new Uint8Array(46 + name.length);
    const cv = new DataView(entry.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 20, true);
    cv.setUint16(6, 20, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, data.length, true);
    cv.setUint32(24, data.length, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(42, offset, true);
    entry.set(name, 46);
    parts.push(local, data);
    central.push(entry);
    offset += local.length + data.length;
  }
  const size = central.reduce((s, c) => s + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, arrays.length, true);
  ev.setUint16(10, arrays.length, true);
  ev.setUint32(12, size, true);
  ev.setUint32(16, offset, true);
  const out = new Uint8Array(offset + size + 22);
  let at = 0;
  for (const p of [...parts, ...central, end]) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
