import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mp4Seconds } from "./mp4.js";
import { readableSeconds, seededRandom } from "../../../../tests/support/seeded.js";

const u32 = (...values: number[]) => {
  const bytes = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => bytes.writeUInt32BE(value, 4 * i));
  return bytes;
};
const u16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);
const box = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(8 + body.length), Buffer.from(type, "latin1"), body]);
};
/** A box with a 64-bit size (size field 1). */
const largeBox = (type: string, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([u32(1), Buffer.from(type, "latin1"), u32(0, 16 + body.length), body]);
};
const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]) => box(type, u32(version * 2 ** 24 + flags), ...parts);
/** An MPEG-4 descriptor with the four-byte size encoders write. */
const descriptor = (tag: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag, 0x80, 0x80, 0x80, body.length]), body]);
};

const ftyp = box("ftyp", Buffer.from("M4A ", "latin1"), u32(0), Buffer.from("M4A isom", "latin1"));
/** AudioSpecificConfig of AAC-LC, 44.1 kHz, mono: object type 2, rate index 4, one channel. */
const aacLc44k = Buffer.from([0x12, 0x08]);

function mp4a(config = aacLc44k): Buffer {
  const decoderConfig = descriptor(4, Buffer.from([0x40, 0x15, 0, 0, 0]), u32(32_000, 32_000), descriptor(5, config));
  const esds = fullBox("esds", 0, 0, descriptor(3, u16(1), Buffer.from([0]), decoderConfig, descriptor(6, Buffer.from([2]))));
  return box("mp4a", Buffer.alloc(6), u16(1), Buffer.alloc(8), u16(1), u16(16), u16(0), u16(0), u32(44_100 * 65_536), esds);
}

interface TrackSpec {
  id?: number;
  handler?: string;
  timescale?: number;
  /** `stts` entries: [sample count, duration]. */
  durations?: [number, number][];
  samples?: number;
  /** What `mdhd` states as the duration. */
  stated?: number;
  entry?: Buffer;
}

function trak(spec: TrackSpec = {}): Buffer {
  const { id = 1, handler = "soun", timescale = 44_100, durations = [], stated = 0, entry = mp4a() } = spec;
  const samples = spec.samples ?? durations.reduce((sum, [count]) => sum + count, 0);
  const stbl = box(
    "stbl",
    fullBox("stsd", 0, 0, u32(1), entry),
    fullBox("stts", 0, 0, u32(durations.length), ...durations.map(([count, delta]) => u32(count, delta))),
    fullBox("stsz", 0, 0, u32(200, samples)),
  );
  const mdia = box(
    "mdia",
    fullBox("mdhd", 0, 0, u32(0, 0, timescale, stated, 0)),
    fullBox("hdlr", 0, 0, u32(0), Buffer.from(handler, "latin1"), u32(0, 0, 0), Buffer.from([0])),
    box("minf", box("smhd", u32(0, 0)), stbl),
  );
  return box("trak", fullBox("tkhd", 0, 7, u32(0, 0, id, 0, stated), Buffer.alloc(60)), mdia);
}

const mvhd = (stated: number) => fullBox("mvhd", 0, 0, u32(0, 0, 1000, stated), Buffer.alloc(80));
const m4a = (...traks: Buffer[]) => Buffer.concat([ftyp, box("moov", mvhd(0), ...traks), box("mdat", Buffer.alloc(64))]);
const frame = 1024 / 44_100;

describe("MP4 length", () => {
  it("sums the stts sample durations over the mdhd timescale", () => {
    const file = m4a(trak({ durations: [[100, 1024], [1, 512]] }));
    expect(mp4Seconds(file)).toBeCloseTo((100 * 1024 + 512) / 44_100, 9);
  });

  it("reads neither the mvhd nor the mdhd duration", () => {
    const short = Buffer.concat([ftyp, box("moov", mvhd(1), trak({ durations: [[100, 1024]], stated: 1 }))]);
    expect(mp4Seconds(short)).toBeCloseTo(100 * frame, 9);
    const long = Buffer.concat([ftyp, box("moov", mvhd(3_600_000), trak({ durations: [[100, 1024]], stated: 44_100 * 3600 }))]);
    expect(mp4Seconds(long)).toBeCloseTo(100 * frame, 9);
  });

  it("measures the sound track, not a video track before it", () => {
    const video = trak({ id: 1, handler: "vide", timescale: 600, durations: [[6000, 20]], entry: box("avc1", Buffer.alloc(78)) });
    expect(mp4Seconds(m4a(video, trak({ id: 2, durations: [[50, 1024]] })))).toBeCloseTo(50 * frame, 9);
    expect(mp4Seconds(m4a(video))).toBeUndefined();
  });

  it("counts the longest of two sound tracks", () => {
    const file = m4a(trak({ id: 1, durations: [[10, 1024]] }), trak({ id: 2, timescale: 48_000, durations: [[100, 960]], entry: box("alac", Buffer.alloc(28)) }));
    expect(mp4Seconds(file)).toBeCloseTo(2, 9);
  });

  it("times only the samples stsz lists, and gives unreached samples the last duration", () => {
    expect(mp4Seconds(m4a(trak({ durations: [[1_000_000, 1024]], samples: 10 })))).toBeCloseTo(10 * frame, 9);
    expect(mp4Seconds(m4a(trak({ durations: [[1, 1024]], samples: 10 })))).toBeCloseTo(10 * frame, 9);
  });

  it("does not let AAC or Opus sample durations or the timescale count less than the frames a decoder decodes", () => {
    // One tick a sample, or a timescale a thousand times too large: each AAC sample still decodes 1024 samples at 44.1 kHz.
    expect(mp4Seconds(m4a(trak({ durations: [[100, 1]] })))).toBeCloseTo(99 * frame, 9);
    expect(mp4Seconds(m4a(trak({ timescale: 44_100_000, durations: [[100, 1024]] })))).toBeCloseTo(99 * frame, 9);
    // HE-AAC signalled explicitly (object type 5, core 22.05 kHz, output 44.1 kHz, then type 2): 1024 core samples a frame.
    const heAac = Buffer.from([0x2b, 0x92, 0x08, 0x00]);
    expect(mp4Seconds(m4a(trak({ durations: [[101, 1]], entry: mp4a(heAac) })))).toBeCloseTo((100 * 1024) / 22_050, 9);
    // Opus packets last at least 2.5 ms.
    expect(mp4Seconds(m4a(trak({ timescale: 48_000, durations: [[101, 1]], entry: box("Opus", Buffer.alloc(28)) })))).toBeCloseTo(0.25, 9);
  });

  it("adds the sample durations of movie fragments: trun, else tfhd, else trex", () => {
    const moov = box(
      "moov",
      mvhd(0),
      trak({ id: 1 }),
      trak({ id: 2, handler: "vide", entry: box("avc1", Buffer.alloc(78)) }),
      box("mvex", fullBox("trex", 0, 0, u32(1, 1, 1024, 0, 0)), fullBox("trex", 0, 0, u32(2, 1, 9999, 0, 0))),
    );
    const trun = (flags: number, count: number, ...entries: Buffer[]) => fullBox("trun", 0, flags, u32(count), ...entries);
    const traf = (tfhdFlags: number, tfhd: Buffer, ...runs: Buffer[]) => box("traf", fullBox("tfhd", 0, tfhdFlags, tfhd), ...runs);
    const fragments = [
      // Per-sample durations and sizes, with a data offset.
      box("moof", fullBox("mfhd", 0, 0, u32(1)), traf(0x020000, u32(1), trun(0x301, 3, u32(0), u32(1024, 10, 1024, 10, 512, 10)))),
      // The tfhd default (flag 0x08, after a base data offset and a sample description index).
      box("moof", traf(0x0b, Buffer.concat([u32(1), u32(0, 0), u32(1), u32(2048)]), trun(0x200, 2, u32(10, 10)))),
      // The trex default; and a fragment of the video track, which does not count.
      box("moof", traf(0, u32(1), trun(0, 5)), traf(0, u32(2), trun(0, 500))),
    ];
    const file = Buffer.concat([ftyp, moov, ...fragments.flatMap((moof) => [moof, box("mdat", Buffer.alloc(40))])]);
    expect(mp4Seconds(file)).toBeCloseTo((1024 + 1024 + 512 + 2 * 2048 + 5 * 1024) / 44_100, 9);
  });

  it("reads 64-bit box sizes, a last box of size 0, and a box that runs past the end", () => {
    const moov = largeBox("moov", mvhd(0), trak({ durations: [[30, 1024]] }));
    const toEnd = Buffer.concat([u32(0), Buffer.from("mdat", "latin1"), Buffer.alloc(100)]);
    expect(mp4Seconds(Buffer.concat([ftyp, largeBox("free", Buffer.alloc(20)), moov, toEnd]))).toBeCloseTo(30 * frame, 9);
    const cut = Buffer.concat([ftyp, moov, box("mdat", Buffer.alloc(1000))]).subarray(0, ftyp.length + moov.length + 100);
    expect(mp4Seconds(cut)).toBeCloseTo(30 * frame, 9);
    // A moov cut short loses what lies past the cut, and reads nothing past the bytes.
    expect(mp4Seconds(Buffer.concat([ftyp, moov]).subarray(0, ftyp.length + 60))).toBeUndefined();
  });

  it("reads no length from other data or a file without a movie", () => {
    expect(mp4Seconds(Buffer.from("RIFF....WAVEfmt ", "latin1"))).toBeUndefined();
    expect(mp4Seconds(Buffer.concat([ftyp, box("mdat", Buffer.alloc(100))]))).toBeUndefined();
    expect(mp4Seconds(Buffer.alloc(0))).toBeUndefined();
  });

  it("reads ffmpeg's AAC M4A and fragmented MP4 to within one AAC frame of the 1 s tone", () => {
    // 1 s of a 440 Hz tone at 16 kHz (fixtures/README.md); AAC frames last 1024 / 16,000 s and the encoder
    // primes one frame, which the file holds and a decoder decodes.
    const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
    expect(mp4Seconds(fixture("tone-1s.m4a"))).toBeCloseTo(1.064, 6);
    expect(mp4Seconds(fixture("tone-1s-fragmented.mp4"))).toBeCloseTo(1.064, 6);
  });

  it("skips the media data of a 25 MB upload", () => {
    const file = Buffer.concat([ftyp, box("moov", mvhd(0), trak({ durations: [[1_000_000, 1024]] })), box("mdat", Buffer.alloc(25_000_000))]);
    expect(mp4Seconds(file)).toBeCloseTo(1_000_000 * frame, 6);
  });
});

describe("MP4 length on hostile bytes", () => {
  const real = readFileSync(new URL("./fixtures/tone-1s-fragmented.mp4", import.meta.url));
  const next = seededRandom(7);

  it("never throws on random bytes, truncations or single-byte changes", () => {
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(Array.from({ length: 8 + Math.floor(next() * 400) }, () => Math.floor(next() * 256)));
      bytes.write("ftyp", 4, "latin1");
      expect(readableSeconds(mp4Seconds(bytes))).toBe(true);
    }
    for (let length = 0; length <= real.length; length++) expect(readableSeconds(mp4Seconds(real.subarray(0, length)))).toBe(true);
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(real);
      bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      expect(readableSeconds(mp4Seconds(bytes))).toBe(true);
    }
  });

  it("never throws on boxes nested in themselves, sizes smaller than their header, or huge counts", () => {
    let nested = box("trak", trak());
    for (let i = 0; i < 2000; i++) nested = box(["trak", "mdia", "minf", "stbl", "moof", "traf", "moov"][i % 7]!, nested);
    expect(readableSeconds(mp4Seconds(Buffer.concat([ftyp, box("moov", nested), box("moof", nested)])))).toBe(true);
    const tiny = Buffer.concat([ftyp, u32(4), Buffer.from("moov", "latin1"), u32(0xffffffff), Buffer.from("moov", "latin1")]);
    expect(readableSeconds(mp4Seconds(tiny))).toBe(true);
    const hugeRun = box("moof", box("traf", fullBox("tfhd", 0, 0x08, u32(1, 0xffffffff)), fullBox("trun", 0, 0x100, u32(0xffffffff))));
    expect(readableSeconds(mp4Seconds(Buffer.concat([m4a(trak()), hugeRun])))).toBe(true);
  });
});
