import type { Vector } from "../types.js";

/**
 * Vectors as OpenAI's `encoding_format: "base64"` sends them: the bytes of little-endian float32 values, in
 * standard base64 with padding. Float32Array uses the host's byte order, so a big-endian host swaps bytes
 * through a DataView; a little-endian one (every host Node ships for today) copies the bytes as they are.
 */
const littleEndian = new Uint8Array(new Float32Array([1]).buffer)[3] === 0x3f;

/** A vector of numbers as base64 of little-endian float32, as OpenAI encodes it. */
export function toBase64(vector: readonly number[]): string {
  const floats = Float32Array.from(vector);
  if (!littleEndian) {
    const view = new DataView(floats.buffer);
    for (let i = 0; i < floats.length; i++) view.setFloat32(i * 4, floats[i]!, true);
  }
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

/**
 * How many float32 values base64 of this length holds; undefined when it is not padded to whole base64
 * quanta of whole float32s. Its characters are not read: `isFloat32Base64` checks them.
 */
export function float32Count(base64: string): number | undefined {
  if (base64.length % 4 !== 0) return undefined;
  const bytes = Buffer.byteLength(base64, "base64");
  return bytes % 4 === 0 ? bytes / 4 : undefined;
}

/** The characters that may end canonical base64 before `==` (low 4 bits zero) and before `=` (low 2 bits zero). */
const lastBeforePadding: Readonly<Record<number, string>> = { 1: "AQgw", 2: "AEIMQUYcgkosw048" };

/** Where `isFloat32Base64` decodes, grown to the largest vector seen: a fresh buffer per vector costs as much as decoding it. */
let scratch = Buffer.allocUnsafe(8192);

/**
 * Whether text is canonical base64 (standard alphabet, padded, no bits after the last byte) of at least one
 * float32 value. Node's decoder skips characters outside its alphabet and stops at a `=` before the end,
 * either of which leaves fewer bytes than the length promises; its alphabet also takes the URL-safe `-` and
 * `_`, looked for on their own. Half the cost of decoding and encoding again, and several times faster than
 * a regular expression over the alphabet.
 */
export function isFloat32Base64(base64: string): boolean {
  const count = float32Count(base64);
  if (count === undefined || count === 0) return false;
  if (scratch.length < count * 4) scratch = Buffer.allocUnsafe(count * 4);
  if (scratch.write(base64, 0, count * 4, "base64") !== count * 4) return false;
  if (base64.includes("-") || base64.includes("_")) return false;
  const tail = (count * 4) % 3;
  return tail === 0 || lastBeforePadding[tail]!.includes(base64[base64.length - 4 + tail]!);
}

/** A base64 vector of little-endian float32 values as numbers. Throws a RangeError for text that does not decode to whole float32s. */
export function toFloats(base64: string): number[] {
  const count = float32Count(base64);
  const bytes = Buffer.from(base64, "base64");
  // Node's decoder skips characters outside the alphabet, which leaves fewer bytes than the length promises.
  if (count === undefined || bytes.length !== count * 4) throw new RangeError("not base64 of little-endian float32 values");
  const out = new Array<number>(count);
  if (!littleEndian) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) out[i] = view.getFloat32(i * 4, true);
    return out;
  }
  // A Float32Array needs a 4-byte aligned offset; a small Buffer may sit anywhere in Node's shared pool.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : new Uint8Array(bytes);
  const floats = new Float32Array(aligned.buffer, aligned.byteOffset, count);
  // A plain loop: several times faster than Array.from or spreading a typed array.
  for (let i = 0; i < count; i++) out[i] = floats[i]!;
  return out;
}

/** The number of values in a vector, floats or base64; undefined for base64 that holds no whole float32s. */
export const dimensionsOf = (vector: Vector): number | undefined => (typeof vector === "string" ? float32Count(vector) : vector.length);
