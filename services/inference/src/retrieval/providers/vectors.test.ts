import { describe, expect, it } from "vitest";
import { dimensionsOf, float32Count, isFloat32Base64, toBase64, toFloats } from "./vectors.js";

/** How OpenAI's own clients read a base64 vector: the bytes as a Float32Array. */
const openAiEncoded = (vector: number[]) => Buffer.from(new Float32Array(vector).buffer).toString("base64");

describe("toBase64", () => {
  it("writes little-endian float32 bytes, as OpenAI encodes them", () => {
    // 1 = 0x3f800000, -2 = 0xc0000000, 0.5 = 0x3f000000, least significant byte first.
    expect(toBase64([1, -2, 0.5])).toBe(Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0, 0, 0, 0x3f]).toString("base64"));
    expect(toBase64([1, -2, 0.5])).toBe("AACAPwAAAMAAAAA/");
  });

  it("matches OpenAI's encoding of a vector, rounding to float32", () => {
    const vector = [0.0123456789, -0.987654321, 3.14159, 0, -0, 1e-8, 123456.789];
    expect(toBase64(vector)).toBe(openAiEncoded(vector));
  });

  it("encodes an empty vector as an empty string", () => {
    expect(toBase64([])).toBe("");
  });
});

describe("toFloats", () => {
  it("reads OpenAI's base64 back as float32 values", () => {
    const vector = [0.1, -0.2, 0.3, 42];
    expect(toFloats(openAiEncoded(vector))).toEqual(vector.map(Math.fround));
    expect(toFloats("AACAPwAAAMAAAAA/")).toEqual([1, -2, 0.5]);
  });

  it("round-trips vectors of every small length, whatever offset Node's buffer pool gives the bytes", () => {
    for (let length = 1; length <= 64; length++) {
      const vector = Array.from({ length }, (_, i) => Math.fround(Math.sin(i + length) * 10));
      expect(toFloats(toBase64(vector))).toEqual(vector);
    }
  });

  it("round-trips a large vector", () => {
    const vector = Array.from({ length: 3072 }, (_, i) => Math.fround(Math.cos(i) / 7));
    expect(toFloats(toBase64(vector))).toEqual(vector);
  });

  it("refuses text that is not padded base64 of whole float32 values", () => {
    expect(() => toFloats("AAA=")).toThrow(RangeError); // 2 bytes
    expect(() => toFloats("AACAPwAA")).toThrow(RangeError); // 6 bytes
    expect(() => toFloats("AACAP")).toThrow(RangeError); // not padded
    expect(() => toFloats("AAC*Pw==")).toThrow(RangeError);
  });
});

describe("isFloat32Base64", () => {
  it("takes canonical padded base64 of whole float32 values only", () => {
    expect(isFloat32Base64(toBase64([1, 2, 3]))).toBe(true);
    expect(isFloat32Base64("")).toBe(false);
    expect(isFloat32Base64("AA-APw==")).toBe(false); // URL-safe alphabet
    expect(isFloat32Base64("AAC APw=")).toBe(false);
    expect(isFloat32Base64("AACAPx==")).toBe(false); // bits after the last byte
    expect(isFloat32Base64("AAA=")).toBe(false);
    expect(isFloat32Base64("AA_APw==")).toBe(false);
    expect(isFloat32Base64("AA=APw==")).toBe(false); // padding before the end
    expect(isFloat32Base64("AAC\u0001Pw=")).toBe(false);
    expect(isFloat32Base64('AAC"APw=')).toBe(false);
    expect(isFloat32Base64("AACAPwAAAMB=")).toBe(false); // bits after the last byte, one `=`
    expect(isFloat32Base64(toBase64([1, 2]))).toBe(true);
    expect(isFloat32Base64(toBase64([1, 2, 3, 4, 5]))).toBe(true);
  });
});

describe("float32Count and dimensionsOf", () => {
  it("count the values of base64 and float vectors", () => {
    expect(float32Count("AACAPwAAAMAAAAA/")).toBe(3);
    expect(float32Count("AACAPw==")).toBe(1);
    expect(float32Count("AAA=")).toBeUndefined();
    expect(dimensionsOf(toBase64([1, 2, 3, 4]))).toBe(4);
    expect(dimensionsOf([1, 2])).toBe(2);
  });
});
