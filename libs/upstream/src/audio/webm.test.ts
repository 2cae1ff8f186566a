import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { webmSeconds } from "./webm.js";
import { readableSeconds, seededRandom } from "../../../../tests/support/seeded.js";

const idBytes = (id: number) => {
  const hex = id.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, "hex");
};
/** The shortest EBML size field for `size`. */
function sizeBytes(size: number): Buffer {
  let length = 1;
  while (size >= 2 ** (7 * length) - 1) length++;
  const bytes = Buffer.alloc(length);
  let rest = size;
  for (let i = length - 1; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  bytes[0]! |= 0x80 >> (length - 1);
  return bytes;
}
const el = (id: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([idBytes(id), sizeBytes(body.length), body]);
};
/** An element of unknown size (all ones), as MediaRecorder writes its Segment and Clusters. */
const open = (id: number, ...parts: Buffer[]) => Buffer.concat([idBytes(id), Buffer.from([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), ...parts]);
const uint = (id: number, value: number) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return el(id, bytes.subarray(Math.min(7, bytes.findIndex((byte) => byte !== 0) >>> 0)));
};
/** A signed integer element, eight bytes wide. */
const int = (id: number, value: number) => {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(BigInt(value));
  return el(id, bytes);
};
const text = (id: number, value: string) => el(id, Buffer.from(value, "latin1"));
const float = (id: number, value: number) => {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value);
  return el(id, bytes);
};

const ebml = (docType = "webm") => el(0x1a45dfa3, uint(0x4286, 1), text(0x4282, docType), uint(0x4287, 4), uint(0x4285, 2));
const info = (...fields: Buffer[]) => el(0x1549a966, text(0x4d80, "test"), ...fields);
const audioTrack = (number: number, codec: string, ...fields: Buffer[]) => el(0xae, uint(0xd7, number), uint(0x83, 2), text(0x86, codec), ...fields);
const tracks = (...entries: Buffer[]) => el(0x1654ae6b, ...entries);
const cluster = (timecode: number, ...blocks: Buffer[]) => open(0x1f43b675, uint(0xe7, timecode), ...blocks);
const knownCluster = (timecode: number, ...blocks: Buffer[]) => el(0x1f43b675, uint(0xe7, timecode), ...blocks);

/** A block body: track number, 16-bit relative timecode, flags with the lacing bits, lace header, frames. */
function blockBody(track: number, time: number, frames: Buffer[], lacing = 0): Buffer {
  const head = Buffer.from([0x80 | track, 0, 0, 0x80 | (lacing << 1)]);
  head.writeInt16BE(time, 1);
  if (lacing === 0) return Buffer.concat([head, ...frames]);
  const sizes = frames.slice(0, -1).map((frame) => frame.length);
  let lace: number[] = [];
  if (lacing === 1) lace = sizes.flatMap((size) => [...Array<number>(Math.floor(size / 255)).fill(255), size % 255]);
  if (lacing === 3) {
    lace = [...sizeBytes(sizes[0]!)];
    for (let i = 1; i < sizes.length; i++) lace.push(...laceDifference(sizes[i]! - sizes[i - 1]!));
  }
  return Buffer.concat([head, Buffer.from([frames.length - 1, ...lace]), ...frames]);
}
/** An EBML lace size after the first: the difference from the one before, biased to be unsigned. */
function laceDifference(difference: number): number[] {
  const length = Math.abs(difference) < 63 ? 1 : 2;
  const biased = difference + 2 ** (7 * length - 1) - 1;
  return length === 1 ? [0x80 | biased] : [0x40 | (biased >> 8), biased & 0xff];
}
const simple = (track: number, time: number, ...frames: Buffer[]) => el(0xa3, blockBody(track, time, frames));
const group = (track: number, time: number, frame: Buffer, ...fields: Buffer[]) => el(0xa0, el(0xa1, blockBody(track, time, [frame])), ...fields);

/** An Opus packet of one frame by TOC config: 31 is CELT fullband 20 ms, 3 SILK 60 ms, 28 CELT 2.5 ms. */
const opus = (config = 31, bytes = 40) => Buffer.concat([Buffer.from([config << 3]), Buffer.alloc(bytes - 1, 0x55)]);
const webm = (...body: Buffer[]) => Buffer.concat([ebml(), open(0x18538067, ...body)]);
const opusTrack = tracks(audioTrack(1, "A_OPUS", el(0xe1, float(0xb5, 48_000), uint(0x9f, 1))));
/** Opus blocks every 20 ms from `from` ms, `count` of them. */
const opusRun = (from: number, count: number) => Array.from({ length: count }, (_, i) => simple(1, from + 20 * i, opus()));

describe("WebM length", () => {
  it("reads MediaRecorder output: unknown-size Segment and Clusters, no Duration, Opus", () => {
    const file = webm(info(uint(0x2ad7b1, 1_000_000)), opusTrack, cluster(0, ...opusRun(0, 50)), cluster(1000, ...opusRun(0, 60)));
    expect(webmSeconds(file)).toBeCloseTo(2.2, 9);
  });

  it("reads neither a shorter nor a longer Info Duration", () => {
    const blocks = cluster(0, ...opusRun(0, 50));
    expect(webmSeconds(webm(info(float(0x4489, 100)), opusTrack, blocks))).toBeCloseTo(1, 9);
    expect(webmSeconds(webm(info(float(0x4489, 3_600_000)), opusTrack, blocks))).toBeCloseTo(1, 9);
  });

  it("times blocks by the TimecodeScale and known-size Clusters", () => {
    // 100 µs ticks: a cluster at 10,000 ticks is at 1 s; its block at 2,000 ticks more is at 1.2 s.
    const file = webm(info(uint(0x2ad7b1, 100_000)), opusTrack, knownCluster(0, simple(1, 0, opus())), knownCluster(10_000, simple(1, 2000, opus())));
    expect(webmSeconds(file)).toBeCloseTo(1.22, 9);
  });

  it("ends the last block by BlockDuration, the Opus TOC, the gap between blocks, or DefaultDuration", () => {
    const vorbis = (...fields: Buffer[]) => tracks(audioTrack(1, "A_VORBIS", ...fields));
    const frame = Buffer.alloc(30, 1);
    const blocks = [simple(1, 0, frame), simple(1, 23, frame), simple(1, 46, frame)];
    expect(webmSeconds(webm(info(), vorbis(), cluster(0, ...blocks)))).toBeCloseTo(0.069, 9);
    expect(webmSeconds(webm(info(), vorbis(uint(0x23e383, 10_000_000)), cluster(0, ...blocks)))).toBeCloseTo(0.056, 9);
    const withDuration = group(1, 69, frame, uint(0x9b, 40));
    expect(webmSeconds(webm(info(), vorbis(), cluster(0, ...blocks, withDuration)))).toBeCloseTo(0.109, 9);
    // A 60 ms SILK packet ends 60 ms after it starts, whatever BlockDuration says.
    expect(webmSeconds(webm(info(), opusTrack, cluster(0, group(1, 0, opus(3), uint(0x9b, 5)))))).toBeCloseTo(0.06, 9);
  });

  it("drops the CodecDelay and the last block's DiscardPadding, but no more than the block", () => {
    const delayed = tracks(audioTrack(1, "A_OPUS", uint(0x56aa, 6_500_000)));
    const padded = (padding: number) => group(1, 980, opus(), int(0x75a2, padding));
    expect(webmSeconds(webm(info(), delayed, cluster(0, ...opusRun(0, 49), padded(13_500_000))))).toBeCloseTo(0.98, 9);
    // A padding longer than the block, or a delay of an hour, still leaves every whole packet the decoder decodes.
    expect(webmSeconds(webm(info(), opusTrack, cluster(0, ...opusRun(0, 49), padded(3_600_000_000))))).toBeCloseTo(0.98, 9);
    const hour = tracks(audioTrack(1, "A_OPUS", uint(0x56aa, 3_600_000_000_000)));
    expect(webmSeconds(webm(info(), hour, cluster(0, ...opusRun(0, 50))))).toBeCloseTo(0.98, 9);
  });

  it("does not let timestamps count less than the Opus, AAC or PCM frames a decoder decodes", () => {
    const stacked = cluster(0, ...Array.from({ length: 100 }, () => simple(1, 0, opus())));
    expect(webmSeconds(webm(info(), opusTrack, stacked))).toBeCloseTo(99 * 0.02, 9);
    expect(webmSeconds(webm(info(uint(0x2ad7b1, 1)), opusTrack, cluster(0, ...opusRun(0, 100))))).toBeCloseTo(99 * 0.02, 9);
    // AAC-LC at 44.1 kHz from the AudioSpecificConfig, whatever SamplingFrequency says.
    const aac = tracks(audioTrack(1, "A_AAC", el(0x63a2, Buffer.from([0x12, 0x08])), el(0xe1, float(0xb5, 8000))));
    const aacBlocks = cluster(0, ...Array.from({ length: 10 }, () => simple(1, 0, Buffer.alloc(100))));
    expect(webmSeconds(webm(info(), aac, aacBlocks))).toBeCloseTo((9 * 1024) / 44_100, 9);
    // 16-bit mono PCM at 16 kHz: every byte plays.
    const pcm = tracks(audioTrack(1, "A_PCM/INT/LIT", el(0xe1, float(0xb5, 16_000), uint(0x9f, 1), uint(0x6264, 16))));
    expect(webmSeconds(webm(info(), pcm, cluster(0, simple(1, 0, Buffer.alloc(32_000)), simple(1, 0, Buffer.alloc(16_000)))))).toBeCloseTo(1.5, 9);
  });

  it("decodes each frame of Xiph, EBML and fixed-size laced blocks", () => {
    // 20 ms, 60 ms and 2.5 ms frames in one block; a code 3 packet of three 20 ms frames is 60 ms.
    const frames = [opus(31, 300), opus(3, 20), opus(28, 10)];
    const code3 = Buffer.from([(31 << 3) | 3, 3, 0, 0]);
    for (const lacing of [1, 3]) {
      const block = el(0xa3, blockBody(1, 0, [...frames, code3], lacing));
      expect(webmSeconds(webm(info(), opusTrack, cluster(0, block)))).toBeCloseTo(0.1425, 9);
    }
    const fixed = el(0xa3, blockBody(1, 0, [opus(3, 20), opus(3, 20)], 2));
    expect(webmSeconds(webm(info(), opusTrack, cluster(0, fixed)))).toBeCloseTo(0.12, 9);
  });

  it("counts the longest audio track and no video track", () => {
    const two = tracks(
      el(0xae, uint(0xd7, 1), uint(0x83, 1), text(0x86, "V_VP8")),
      audioTrack(2, "A_OPUS"),
      audioTrack(3, "A_OPUS"),
    );
    const blocks = [simple(1, 5000, Buffer.alloc(10)), simple(2, 0, opus()), simple(3, 0, opus()), simple(3, 100, opus())];
    expect(webmSeconds(webm(info(), two, cluster(0, ...blocks)))).toBeCloseTo(0.12, 9);
    expect(webmSeconds(webm(info(), tracks(el(0xae, uint(0xd7, 1), uint(0x83, 1))), cluster(0, blocks[0]!)))).toBeUndefined();
  });

  it("goes on from the next Cluster past an element it cannot read", () => {
    const broken = Buffer.concat([Buffer.from([0x00, 0x12]), open(0xec, Buffer.alloc(50))]);
    const file = webm(info(), opusTrack, cluster(0, ...opusRun(0, 10)), broken, cluster(1000, ...opusRun(0, 10)));
    expect(webmSeconds(file)).toBeCloseTo(1.2, 9);
  });

  it("reads no length from other data", () => {
    expect(webmSeconds(Buffer.from("OggS and more bytes", "latin1"))).toBeUndefined();
    expect(webmSeconds(Buffer.concat([ebml("other"), open(0x18538067, info(), opusTrack)]))).toBeUndefined();
    expect(webmSeconds(webm(info()))).toBeUndefined();
    expect(webmSeconds(webm(info(), opusTrack))).toBe(0);
  });

  it("reads ffmpeg's live WebM/Opus and Matroska/Vorbis to within one frame of the 1 s tone", () => {
    const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
    // The last 20 ms Opus block starts at 1.001 s (timestamps are whole milliseconds) with 13.5 ms of
    // DiscardPadding, and the track's CodecDelay is 2.17 ms.
    expect(webmSeconds(fixture("tone-1s-live.webm"))).toBeCloseTo(1.005333, 6);
    // Vorbis blocks have no duration of their own: the last one lasts as long as the gap before it.
    expect(webmSeconds(fixture("tone-1s-vorbis.mka"))).toBeCloseTo(1.056, 6);
  });

  it("reads a 25 MB recording of small blocks", { timeout: 20_000 }, () => {
    const blocks = Array.from({ length: 1000 }, (_, i) => simple(1, 20 * i, opus(31, 80)));
    const clusters = Array.from({ length: 300 }, (_, i) => cluster(20_000 * i, ...blocks));
    const file = webm(info(), opusTrack, ...clusters);
    expect(file.length).toBeGreaterThan(25_000_000);
    expect(webmSeconds(file)).toBeCloseTo(300 * 20, 6);
  });
});

describe("WebM length on hostile bytes", () => {
  const real = readFileSync(new URL("./fixtures/tone-1s-live.webm", import.meta.url));
  const next = seededRandom(11);

  it("never throws on random bytes, truncations or single-byte changes", () => {
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(Array.from({ length: Math.floor(next() * 400) }, () => Math.floor(next() * 256)));
      ebml().copy(bytes);
      expect(readableSeconds(webmSeconds(bytes))).toBe(true);
    }
    for (let length = 0; length <= real.length; length++) expect(readableSeconds(webmSeconds(real.subarray(0, length)))).toBe(true);
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(real);
      bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      expect(readableSeconds(webmSeconds(bytes))).toBe(true);
    }
  });

  it("never throws on elements nested in themselves or sizes past the end", () => {
    let nested = opusRun(0, 1)[0]!;
    for (let i = 0; i < 3000; i++) nested = [open, el][i % 2]!([0x18538067, 0x1f43b675, 0xa0, 0x1654ae6b, 0xae][i % 5]!, nested);
    expect(readableSeconds(webmSeconds(Buffer.concat([ebml(), nested])))).toBe(true);
    const huge = Buffer.concat([ebml(), open(0x18538067, info(), opusTrack), Buffer.from([0x1f, 0x43, 0xb6, 0x75, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])]);
    expect(readableSeconds(webmSeconds(huge))).toBe(true);
    const laced = el(0xa3, Buffer.from([0x81, 0, 0, 0x82, 0xff, 0xff, 0xff, 0xff]));
    expect(readableSeconds(webmSeconds(webm(info(), opusTrack, cluster(0, laced))))).toBe(true);
  });
});
