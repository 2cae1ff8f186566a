import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { flacSeconds } from "./flac.js";
import { seededRandom } from "../../../../tests/support/seeded.js";

function crc(bytes: Iterable<number>, width: 8 | 16, polynomial: number): number {
  const top = 1 << (width - 1);
  const mask = (1 << width) - 1;
  let value = 0;
  for (const byte of bytes) {
    value ^= byte << (width - 8);
    for (let bit = 0; bit < 8; bit++) value = value & top ? ((value << 1) ^ polynomial) & mask : (value << 1) & mask;
  }
  return value;
}

/** FLAC's UTF-8 style coding of a frame or sample number. */
function codedNumber(value: number): number[] {
  if (value < 0x80) return [value];
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x40 >> bytes.length) {
    bytes.unshift(0x80 | (rest & 0x3f));
    rest = Math.floor(rest / 64);
  }
  return [((0xff00 >> (bytes.length + 1)) & 0xff) | rest, ...bytes];
}

interface FrameOptions {
  samples: number;
  number: number;
  /** Rate code and the bytes written after the header for codes 12 to 14. */
  rateCode?: number;
  rateBytes?: number[];
  variable?: boolean;
  /** The subframe header byte: 0 is a constant subframe. */
  subframe?: number;
  badCrc16?: boolean;
  /** Zero bytes after the subframe, making the frame longer than its smallest size. */
  padding?: number;
}

/** A FLAC frame of one constant 16-bit mono subframe, as ffmpeg decodes it. */
function frame(options: FrameOptions): Buffer {
  const { samples, rateCode = 0, rateBytes = [], subframe = 0, padding = 0 } = options;
  const common = [192, 576, 1152, 2304, 4608, 256, 512, 1024, 2048, 4096, 8192, 16_384, 32_768];
  const code = common.indexOf(samples);
  const sizeCode = code === -1 ? (samples <= 256 ? 6 : 7) : code < 5 ? code + 1 : code + 3;
  const sizeBytes = sizeCode === 6 ? [samples - 1] : sizeCode === 7 ? [(samples - 1) >> 8, (samples - 1) & 0xff] : [];
  const header = [0xff, options.variable ? 0xf9 : 0xf8, (sizeCode << 4) | rateCode, 4 << 1, ...codedNumber(options.number), ...sizeBytes, ...rateBytes];
  const bytes = [...header, crc(header, 8, 0x07), subframe, 0x12, 0x34, ...Array<number>(padding).fill(0)];
  const footer = crc(bytes, 16, 0x8005) ^ (options.badCrc16 ? 0xffff : 0);
  return Buffer.from([...bytes, footer >> 8, footer & 0xff]);
}

/** A metadata block header and body. */
const block = (type: number, body: Buffer, last = false) => Buffer.concat([Buffer.from([(last ? 0x80 : 0) | type, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff]), body]);

/** STREAMINFO for 16-bit mono at `rate`, stating `total` samples. */
function streamInfo(rate: number, total: number): Buffer {
  const body = Buffer.alloc(34);
  body.writeUInt16BE(4096, 0);
  body.writeUInt16BE(4096, 2);
  body.writeBigUInt64BE((BigInt(rate) << 44n) | (15n << 36n) | BigInt(total), 10);
  return body;
}

/** A FLAC file: the marker, STREAMINFO (then `blocks`), and the frames. */
function flac(rate: number, frames: Buffer[], options: { total?: number; blocks?: Buffer[] } = {}): Buffer {
  const { total = 0, blocks = [] } = options;
  const metadata = [block(0, streamInfo(rate, total), blocks.length === 0), ...blocks];
  return Buffer.concat([Buffer.from("fLaC", "latin1"), ...metadata, ...frames]);
}

/** `count` frames of `samples` at STREAMINFO's rate, numbered from 0. */
const frames = (count: number, samples = 4096) => Array.from({ length: count }, (_, number) => frame({ samples, number }));

describe("FLAC length", () => {
  it("adds up the block sizes of the frames at the STREAMINFO sample rate", () => {
    const last = frame({ samples: 1234, number: 10 });
    expect(flacSeconds(flac(16_000, [...frames(10), last]))).toBeCloseTo((10 * 4096 + 1234) / 16_000, 9);
    expect(flacSeconds(flac(44_100, frames(3, 1152)))).toBeCloseTo((3 * 1152) / 44_100, 9);
  });

  it("reads frame numbers of several bytes and 36-bit sample numbers of variable block size streams", () => {
    const numbered = Array.from({ length: 3 }, (_, index) => frame({ samples: 192, number: 5000 + index }));
    expect(flacSeconds(flac(8000, numbered))).toBeCloseTo((3 * 192) / 8000, 9);
    const variable = [0, 2 ** 35].map((number) => frame({ samples: 4096, number, variable: true }));
    expect(flacSeconds(flac(8000, variable))).toBeCloseTo((2 * 4096) / 8000, 9);
  });

  it("does not let STREAMINFO's total sample count lower the count or raise it", () => {
    expect(flacSeconds(flac(16_000, frames(10), { total: 1 }))).toBeCloseTo((10 * 4096) / 16_000, 9);
    expect(flacSeconds(flac(16_000, frames(10), { total: 16_000 * 3600 }))).toBeCloseTo((10 * 4096) / 16_000, 9);
  });

  it("charges the slower of the frame's own sample rate and STREAMINFO's", () => {
    // Rate code 10 is 48 kHz; 13 is a 16-bit rate in Hz written after the header.
    expect(flacSeconds(flac(16_000, [frame({ samples: 4096, number: 0, rateCode: 10 })]))).toBeCloseTo(4096 / 16_000, 9);
    expect(flacSeconds(flac(48_000, [frame({ samples: 4096, number: 0, rateCode: 13, rateBytes: [0x1f, 0x40] })]))).toBeCloseTo(4096 / 8000, 9);
    expect(flacSeconds(flac(16_000, [frame({ samples: 4096, number: 0, rateCode: 5 })]))).toBeCloseTo(4096 / 16_000, 9);
  });

  it("counts a frame whose CRC-16 is wrong, which ffmpeg plays", () => {
    const bad = Array.from({ length: 4 }, (_, number) => frame({ samples: 4096, number, badCrc16: true }));
    expect(flacSeconds(flac(16_000, bad))).toBeCloseTo((4 * 4096) / 16_000, 9);
  });

  it("skips junk, headers with a wrong CRC-8 and headers no decoder can decode", () => {
    const wrongCrc8 = frame({ samples: 4096, number: 1 });
    wrongCrc8[5] = wrongCrc8[5]! ^ 0x01;
    // Subframe types 2 to 7 are reserved, and a subframe header starts with a zero bit.
    const reserved = frame({ samples: 4096, number: 1, subframe: 2 << 1 });
    const padded = frame({ samples: 4096, number: 1, subframe: 0x80 });
    const junk = Buffer.from([0xff, 0xf8, 0xff, 0xff, 0x00, 0x12]);
    const file = flac(16_000, [frame({ samples: 4096, number: 0 }), junk, wrongCrc8, reserved, padded, frame({ samples: 4096, number: 1 })]);
    expect(flacSeconds(file)).toBeCloseTo((2 * 4096) / 16_000, 9);
  });

  it("counts a frame cut short only when the bytes left could hold a complete frame", () => {
    const whole = flac(16_000, frames(3));
    const frameLength = frame({ samples: 4096, number: 2 }).length;
    // The last frame is 6 header bytes, a CRC-8, 3 bytes of subframe and 2 of CRC-16: its smallest size.
    expect(flacSeconds(whole.subarray(0, whole.length - 1))).toBeCloseTo((2 * 4096) / 16_000, 9);
    expect(flacSeconds(whole.subarray(0, whole.length - frameLength + 3))).toBeCloseTo((2 * 4096) / 16_000, 9);
    const roomy = flac(16_000, [...frames(2), frame({ samples: 4096, number: 2, padding: 20 })]);
    expect(flacSeconds(roomy.subarray(0, roomy.length - 15))).toBeCloseTo((3 * 4096) / 16_000, 9);
  });

  it("skips the metadata blocks after STREAMINFO and ID3v2 tags before the marker", () => {
    // A PADDING block full of bytes that would read as a frame header if it were scanned.
    const padding = block(1, Buffer.concat([frame({ samples: 32_768, number: 0 }), Buffer.alloc(10)]), true);
    expect(flacSeconds(flac(16_000, frames(2), { blocks: [padding] }))).toBeCloseTo((2 * 4096) / 16_000, 9);
    const id3 = Buffer.concat([Buffer.from("ID3\x04\x00\x00\x00\x00\x00\x0a", "latin1"), Buffer.alloc(10)]);
    expect(flacSeconds(Buffer.concat([id3, flac(16_000, frames(2))]))).toBeCloseTo((2 * 4096) / 16_000, 9);
  });

  it("reads no length without STREAMINFO, its sample rate, or a frame", () => {
    expect(flacSeconds(Buffer.from("OggS and more bytes than forty-two of them, and more", "latin1"))).toBeUndefined();
    expect(flacSeconds(flac(0, frames(2)))).toBeUndefined();
    expect(flacSeconds(flac(16_000, []))).toBeUndefined();
    const commentFirst = Buffer.concat([Buffer.from("fLaC", "latin1"), block(4, Buffer.alloc(34), true), ...frames(2)]);
    expect(flacSeconds(commentFirst)).toBeUndefined();
  });

  it("reads real encoder output: 1.25 s at 8 kHz written by libFLAC", () => {
    const real = readFileSync(new URL("./fixtures/tone-1.25s-8k.flac", import.meta.url));
    expect(flacSeconds(real)).toBeCloseTo(1.25, 9);
  });

  it("never throws on random, truncated or altered bytes", () => {
    const next = seededRandom(7);
    const whole = flac(16_000, [...frames(6), frame({ samples: 300, number: 6, rateCode: 12, rateBytes: [16] })]);
    const inputs: Buffer[] = [];
    for (let length = 0; length <= whole.length; length++) inputs.push(whole.subarray(0, length));
    for (let round = 0; round < 300; round++) {
      const altered = Buffer.from(whole);
      for (let change = 0; change < 4; change++) altered[Math.floor(next() * altered.length)] = Math.floor(next() * 256);
      inputs.push(altered);
      const noise = Buffer.from(Array.from({ length: 200 }, () => (next() < 0.2 ? 0xff : Math.floor(next() * 256))));
      inputs.push(Buffer.concat([whole.subarray(0, 42), noise]));
    }
    inputs.push(Buffer.concat([whole.subarray(0, 42), Buffer.alloc(1 << 20, Buffer.from([0xff, 0xf8]))]));
    for (const input of inputs) {
      const seconds = flacSeconds(input);
      if (seconds !== undefined) expect(seconds).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(seconds)).toBe(false);
    }
  });
});
