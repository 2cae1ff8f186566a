import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { aacSeconds } from "./aac.js";
import { mp3Seconds } from "./mp3.js";
import { seededRandom } from "../../../../tests/support/seeded.js";

/** An ADTS frame of `length` bytes: sampling frequency index 8 is 16 kHz, 4 is 44.1 kHz, 11 is 8 kHz. */
function frame(options: { rateIndex?: number; blocks?: number; length?: number; layer?: number } = {}): Buffer {
  const { rateIndex = 8, blocks = 1, length = 40, layer = 0 } = options;
  const bytes = Buffer.alloc(Math.max(length, 7));
  // MPEG-4, no CRC, AAC LC, mono; then the 13-bit frame length, buffer fullness 0x7ff and the block count.
  bytes.set([0xff, 0xf1 | (layer << 1), (1 << 6) | (rateIndex << 2), 0x40 | (length >> 11), (length >> 3) & 0xff, ((length & 7) << 5) | 0x1f, 0xfc | (blocks - 1)]);
  return bytes;
}
const frames = (count: number, options: Parameters<typeof frame>[0] = {}) => Buffer.concat(Array.from({ length: count }, () => frame(options)));

describe("ADTS AAC length", () => {
  it("counts 1024 samples for each raw data block of each frame at the frame's sample rate", () => {
    expect(aacSeconds(frames(100))).toBeCloseTo((100 * 1024) / 16_000, 9);
    expect(aacSeconds(frames(10, { rateIndex: 4, blocks: 4, length: 300 }))).toBeCloseTo((40 * 1024) / 44_100, 9);
    expect(aacSeconds(Buffer.concat([frames(5), frames(5, { rateIndex: 11 })]))).toBeCloseTo((5 * 1024) / 16_000 + (5 * 1024) / 8000, 9);
  });

  it("skips junk between frames one byte at a time, as mp3.ts does", () => {
    const junk = Buffer.from([0xff, 0xf1, 0x00, 0x12, 0xff, 0xff, 0x00]);
    expect(aacSeconds(Buffer.concat([frames(3), junk, frames(3), Buffer.alloc(5), frames(3)]))).toBeCloseTo((9 * 1024) / 16_000, 9);
  });

  it("counts further frames whatever their layer bits say, as ffmpeg does", () => {
    expect(aacSeconds(Buffer.concat([frames(2), frames(3, { layer: 1 })]))).toBeCloseTo((5 * 1024) / 16_000, 9);
  });

  it("does not count a frame cut short by the end of the file", () => {
    const whole = frames(10);
    expect(aacSeconds(whole.subarray(0, whole.length - 1))).toBeCloseTo((9 * 1024) / 16_000, 9);
    expect(aacSeconds(whole.subarray(0, 10))).toBe(0);
  });

  it("reads the frames between an ID3v2 tag and an ID3v1 tag", () => {
    const id3 = Buffer.concat([Buffer.from("ID3\x04\x00\x00\x00\x00\x00\x14", "latin1"), Buffer.alloc(20)]);
    // A tag whose text would read as three frames if it were walked.
    const tag = Buffer.concat([Buffer.from("TAG", "latin1"), frames(3), Buffer.alloc(5)]);
    expect(aacSeconds(Buffer.concat([id3, frames(20), tag]))).toBeCloseTo((20 * 1024) / 16_000, 9);
  });

  it("reads no length from other data", () => {
    // An MPEG audio frame sets layer bits; ADTS starts with zero there.
    const mp3 = Buffer.alloc(417);
    mp3.set([0xff, 0xfb, 0x90, 0x00]);
    expect(mp3Seconds(mp3)).toBeDefined();
    expect(aacSeconds(Buffer.concat([mp3, mp3]))).toBeUndefined();
    expect(aacSeconds(Buffer.from("OggS and more bytes", "latin1"))).toBeUndefined();
    expect(aacSeconds(Buffer.concat([Buffer.alloc(1), frames(3)]))).toBeUndefined();
    // Sampling frequency indexes 13 to 15 name no rate; a frame is at least its 7-byte header.
    expect(aacSeconds(frames(3, { rateIndex: 13 }))).toBeUndefined();
    expect(aacSeconds(frame({ length: 6 }))).toBeUndefined();
    expect(aacSeconds(Buffer.alloc(0))).toBeUndefined();
  });

  it("reads real encoder output: 1.25 s at 8 kHz written by ffmpeg, which plays 11 frames", () => {
    // ADTS cannot say how much of the first and last frame the encoder added; a decoder plays all of it.
    const real = readFileSync(new URL("./fixtures/tone-1.25s-8k.aac", import.meta.url));
    expect(aacSeconds(real)).toBeCloseTo((11 * 1024) / 8000, 9);
  });

  it("never throws on random, truncated or altered bytes", () => {
    const next = seededRandom(11);
    const whole = Buffer.concat([frames(4), frames(2, { rateIndex: 3, blocks: 2, length: 90 })]);
    const inputs: Buffer[] = [];
    for (let length = 0; length <= whole.length; length++) inputs.push(whole.subarray(0, length));
    for (let round = 0; round < 300; round++) {
      const altered = Buffer.from(whole);
      for (let change = 0; change < 4; change++) altered[Math.floor(next() * altered.length)] = Math.floor(next() * 256);
      inputs.push(altered);
      inputs.push(Buffer.concat([frame(), Buffer.from(Array.from({ length: 300 }, () => (next() < 0.2 ? 0xff : Math.floor(next() * 256))))]));
    }
    inputs.push(Buffer.concat([frame(), Buffer.alloc(1 << 20, 0xff)]));
    for (const input of inputs) {
      const seconds = aacSeconds(input);
      if (seconds !== undefined) expect(seconds).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(seconds)).toBe(false);
    }
  });
});
