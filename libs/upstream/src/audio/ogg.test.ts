import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { oggSeconds } from "./ogg.js";
import { seededRandom } from "../../../../tests/support/seeded.js";

const crcTable = Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  return crc >>> 0;
});

/** A part of a packet on a page; `open` when the packet goes on on the next page (its length a multiple of 255). */
interface Piece {
  data: Buffer;
  open?: boolean;
}

interface PageOptions {
  serial?: number;
  sequence?: number;
  /** 1 continues a packet, 2 begins a stream, 4 ends it. */
  flags?: number;
  granule?: bigint;
  badCrc?: boolean;
}

/** An Ogg page holding `pieces`, with its CRC-32. */
function page(pieces: (Buffer | Piece)[], options: PageOptions = {}): Buffer {
  const { serial = 1, sequence = 0, flags = 0, granule = 0n } = options;
  const lacing: number[] = [];
  for (const piece of pieces) {
    const { data, open = false } = Buffer.isBuffer(piece) ? { data: piece } : piece;
    for (let left = data.length; left >= 255; left -= 255) lacing.push(255);
    if (!open) lacing.push(data.length % 255);
  }
  const header = Buffer.alloc(27);
  header.write("OggS", 0, "latin1");
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(serial, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = lacing.length;
  const bytes = Buffer.concat([header, Buffer.from(lacing), ...pieces.map((piece) => (Buffer.isBuffer(piece) ? piece : piece.data))]);
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ crcTable[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  bytes.writeUInt32LE(options.badCrc ? (crc ^ 1) >>> 0 : crc, 22);
  return bytes;
}

const opusHead = (preSkip = 312) => Buffer.concat([Buffer.from("OpusHead\x01\x01", "latin1"), Buffer.from([preSkip & 0xff, preSkip >> 8, 0x80, 0xbb, 0, 0, 0, 0, 0])]);
const opusTags = Buffer.from("OpusTags\0\0\0\0\0\0\0\0", "latin1");
/** An Opus packet: config 1 is a 20 ms SILK frame (960 samples), 16 a 2.5 ms CELT frame, 3 a 60 ms SILK frame. */
const opus = (config = 1, code = 0, count = 0) => Buffer.from([(config << 3) | code, count, 0x55, 0xaa]);

/** An Ogg Opus stream: head and tags pages, then `perPage` packets a page, the last page ending the stream. */
function opusStream(packets: Buffer[], options: { serial?: number; preSkip?: number; finalGranule?: bigint; perPage?: number } = {}): Buffer[] {
  const { serial = 1, preSkip = 312, perPage = 5 } = options;
  const pages = [page([opusHead(preSkip)], { serial, flags: 2 }), page([opusTags], { serial, sequence: 1 })];
  for (let index = 0; index < packets.length; index += perPage) {
    const onPage = packets.slice(index, index + perPage);
    const last = index + perPage >= packets.length;
    const granule = last && options.finalGranule !== undefined ? options.finalGranule : BigInt((index + onPage.length) * 960);
    pages.push(page(onPage, { serial, sequence: pages.length, flags: last ? 4 : 0, granule }));
  }
  return pages;
}

/** `count` 20 ms Opus packets. */
const twenties = (count: number) => Array.from({ length: count }, () => opus());

/** Writes bits least significant first, as Vorbis packs them. */
function bits(fields: [number, number][]): Buffer {
  const bytes: number[] = [];
  let position = 0;
  for (const [value, count] of fields) {
    for (let index = 0; index < count; index++, position++) {
      if (position % 8 === 0) bytes.push(0);
      bytes[bytes.length - 1]! |= (Math.floor(value / 2 ** index) % 2) << position % 8;
    }
  }
  return Buffer.from(bytes);
}

/** Vorbis headers at 8 kHz mono, block sizes 256 and 2048, with two modes: 0 short, 1 long. */
function vorbisHeaders(): Buffer[] {
  const identification = Buffer.alloc(30);
  identification.write("\x01vorbis", 0, "latin1");
  identification[11] = 1;
  identification.writeUInt32LE(8000, 12);
  identification[28] = (11 << 4) | 8;
  identification[29] = 1;
  const comment = Buffer.from("\x03vorbis\0\0\0\0\0\0\0\0\x01", "latin1");
  const name = [...Buffer.from("\x05vorbis", "latin1")].map((byte): [number, number] => [byte, 8]);
  const codebook: [number, number][] = [[0, 8], [0x564342, 24], [1, 16], [2, 24], [0, 1], [0, 1], [0, 5], [0, 5], [0, 4]];
  const parts: [number, number][] = [[0, 6], [0, 16], [0, 6], [1, 16], [0, 5], [0, 2], [0, 4]];
  const residue: [number, number][] = [[0, 6], [0, 16], [0, 24], [0, 24], [0, 24], [0, 6], [0, 8], [0, 3], [0, 1]];
  const mapping: [number, number][] = [[0, 6], [0, 16], [0, 1], [0, 1], [0, 2], [0, 8], [0, 8], [0, 8]];
  const modes: [number, number][] = [[1, 6], [0, 1], [0, 16], [0, 16], [0, 8], [1, 1], [0, 16], [0, 16], [0, 8], [1, 1]];
  return [identification, comment, bits([...name, ...codebook, ...parts, ...residue, ...mapping, ...modes])];
}

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

describe("Ogg length", () => {
  it("adds up the Opus packets' samples less the pre-skip", () => {
    expect(oggSeconds(Buffer.concat(opusStream(twenties(50), { finalGranule: 50n * 960n })))).toBeCloseTo((50 * 960 - 312) / 48_000, 9);
    // 2.5 ms CELT frames, two 60 ms SILK frames (code 1), and code 3 packets of 2 and 3 frames (3 × 60 ms is too long).
    const mixed = [opus(16), opus(3, 1), opus(1, 3, 2), opus(3, 3, 3)];
    expect(oggSeconds(Buffer.concat(opusStream(mixed, { finalGranule: 10_000n })))).toBeCloseTo((120 + 5760 + 1920 - 312) / 48_000, 9);
  });

  it("lets the final granule position trim the last Opus packet and nothing more", () => {
    const trimmed = opusStream(twenties(50), { finalGranule: 50n * 960n - 500n });
    expect(oggSeconds(Buffer.concat(trimmed))).toBeCloseTo((50 * 960 - 500 - 312) / 48_000, 9);
    // A final granule of 1 s on 10 s of packets: ffmpeg plays all but the last packet.
    const lying = opusStream(twenties(500), { finalGranule: 48_000n });
    expect(oggSeconds(Buffer.concat(lying))).toBeCloseTo((499 * 960 - 312) / 48_000, 9);
    // Granules beyond the packets, or -1 on the last page, add nothing and trim nothing.
    expect(oggSeconds(Buffer.concat(opusStream(twenties(50), { finalGranule: 48_000n * 3600n })))).toBeCloseTo((50 * 960 - 312) / 48_000, 9);
    expect(oggSeconds(Buffer.concat(opusStream(twenties(50), { finalGranule: -1n })))).toBeCloseTo((50 * 960 - 312) / 48_000, 9);
  });

  it("reads packets that span pages and drops the tail of a packet whose start it never saw", () => {
    const long = Buffer.concat([opus(3), Buffer.alloc(600)]);
    const pages = [
      page([opusHead()], { flags: 2 }),
      page([opusTags], { sequence: 1 }),
      page([opus(), { data: long.subarray(0, 510), open: true }], { sequence: 2, granule: -1n }),
      page([long.subarray(510), opus()], { sequence: 3, flags: 1, granule: 960n * 4n }),
      page([{ data: Buffer.alloc(255, 0xf8), open: true }], { sequence: 4, flags: 1, granule: -1n }),
    ];
    const counted = 960 + 2880 + 960 - 312;
    expect(oggSeconds(Buffer.concat(pages))).toBeCloseTo(counted / 48_000, 9);
    // Without page 2 the first piece of page 3 is the tail of a packet never started.
    expect(oggSeconds(Buffer.concat([pages[0]!, pages[1]!, pages[3]!]))).toBeCloseTo((960 - 312) / 48_000, 9);
    // A page that does not continue the open packet: ffmpeg decodes the open one, libogg the page's first packet.
    const restarted = page([opus(16), opus()], { sequence: 3, granule: 960n * 4n });
    expect(oggSeconds(Buffer.concat([pages[0]!, pages[1]!, pages[2]!, restarted]))).toBeCloseTo((960 + 2880 + 120 + 960 - 312) / 48_000, 9);
  });

  it("does not count a packet or page that a truncated file cuts short", () => {
    const whole = Buffer.concat(opusStream(twenties(10), { perPage: 5 }));
    expect(oggSeconds(whole.subarray(0, whole.length - 1))).toBeCloseTo((5 * 960 - 312) / 48_000, 9);
  });

  it("adds up Vorbis packets from the block sizes of their modes, untrimmed", () => {
    const [identification, comment, setup] = vorbisHeaders();
    // Modes: long, long, short, short, long: 0, 1024, 576, 128, 576 samples.
    const audio = [0b10, 0b10, 0b00, 0b00, 0b10].map((first) => Buffer.from([first, 0x33]));
    const pages = [page([identification!], { flags: 2 }), page([comment!, setup!], { sequence: 1 }), page(audio, { sequence: 2, flags: 4, granule: 1000n })];
    expect(oggSeconds(Buffer.concat(pages))).toBeCloseTo((1024 + 576 + 128 + 576) / 8000, 9);
  });

  it("adds up chained streams, takes the pre-skip off the first Opus stream, and ignores a skeleton stream", () => {
    const skeleton = page([Buffer.from("fishead\0\0\0\0\0\0\0\0\0", "latin1")], { serial: 9, flags: 2 });
    const skeletonData = page([Buffer.from("fisbone\0", "latin1")], { serial: 9, sequence: 1, granule: 48_000_000n });
    const first = opusStream(twenties(20), { serial: 1 });
    const second = opusStream(twenties(30), { serial: 2, preSkip: 5000 });
    const file = Buffer.concat([skeleton, first[0]!, skeletonData, ...first.slice(1), ...second]);
    expect(oggSeconds(file)).toBeCloseTo((50 * 960 - 312) / 48_000, 9);
  });

  it("reads a page with a wrong CRC-32 where the last page ended, and after junk only a page with a valid one", () => {
    const pages = opusStream(twenties(15), { perPage: 5, finalGranule: 100_000n });
    const broken = page([opus(), opus(), opus(), opus(), opus()], { sequence: 3, granule: 960n * 10n, badCrc: true });
    const junk = Buffer.from("junk before a page: OggS\0 and more");
    expect(oggSeconds(Buffer.concat([pages[0]!, pages[1]!, pages[2]!, broken, pages[4]!]))).toBeCloseTo((15 * 960 - 312) / 48_000, 9);
    expect(oggSeconds(Buffer.concat([pages[0]!, pages[1]!, pages[2]!, junk, broken, junk, pages[4]!]))).toBeCloseTo((10 * 960 - 312) / 48_000, 9);
    // A valid page inside one whose CRC-32 is wrong is read too, as libogg searches there after the bad page.
    const hidden = page([opus(3), opus(3)], { sequence: 3, granule: 960n * 10n });
    const carrier = page([Buffer.concat([opus(16), hidden])], { sequence: 3, granule: 960n * 10n, badCrc: true });
    expect(oggSeconds(Buffer.concat([pages[0]!, pages[1]!, pages[2]!, carrier, pages[4]!]))).toBeCloseTo((10 * 960 + 120 + 2 * 2880 - 312) / 48_000, 9);
  });

  it("reads no length from other data, other codecs, or headers a decoder refuses", () => {
    expect(oggSeconds(Buffer.from("fLaC and more bytes", "latin1"))).toBeUndefined();
    const speex = page([Buffer.from("Speex   1.2.1", "latin1")], { serial: 5, flags: 2 });
    expect(oggSeconds(Buffer.concat([speex, ...opusStream(twenties(5))]))).toBeUndefined();
    expect(oggSeconds(page([Buffer.from("fishead\0\0\0", "latin1")], { flags: 2 }))).toBeUndefined();
    const shortHead = [page([Buffer.from("OpusHead\x01\x01", "latin1")], { flags: 2 }), ...opusStream(twenties(5)).slice(1)];
    expect(oggSeconds(Buffer.concat(shortHead))).toBeUndefined();
    const [identification, comment, setup] = vorbisHeaders();
    const badSetup = page([comment!, setup!.subarray(0, setup!.length - 1)], { sequence: 1 });
    expect(oggSeconds(Buffer.concat([page([identification!], { flags: 2 }), badSetup]))).toBeUndefined();
  });

  it("reads real encoder output: 1.25 s at 8 kHz written by opusenc and by oggenc", () => {
    expect(oggSeconds(fixture("tone-1.25s-8k-opus.ogg"))).toBeCloseTo(1.25, 9);
    // libvorbisfile trims to the final granule (1.25 s); ffmpeg plays all 10,240 samples of the packets.
    expect(oggSeconds(fixture("tone-1.25s-8k-vorbis.ogg"))).toBeCloseTo(10_240 / 8000, 9);
  });

  it("never throws on random, truncated or altered bytes, and gives up on junk that costs more than two passes", () => {
    const next = seededRandom(13);
    const whole = Buffer.concat([...opusStream(twenties(12), { perPage: 4 }), fixture("tone-1.25s-8k-vorbis.ogg")]);
    const inputs: Buffer[] = [];
    for (let length = 0; length <= whole.length; length += 7) inputs.push(whole.subarray(0, length));
    for (let round = 0; round < 300; round++) {
      const altered = Buffer.from(whole);
      for (let change = 0; change < 4; change++) altered[Math.floor(next() * altered.length)] = Math.floor(next() * 256);
      inputs.push(altered);
      inputs.push(Buffer.from(Array.from({ length: 400 }, (_, index) => (index % 50 < 4 ? "OggS".charCodeAt(index % 50) : Math.floor(next() * 256)))));
    }
    for (const input of inputs) {
      const seconds = oggSeconds(input);
      if (seconds !== undefined) expect(seconds).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(seconds)).toBe(false);
    }
    // Capture patterns every 32 bytes, each claiming a page of 255 segments of 255 bytes.
    const claim = Buffer.concat([Buffer.from("OggS\0\0", "latin1"), Buffer.alloc(20), Buffer.from([255, 255, 255, 255, 255, 255])]);
    const costly = Buffer.concat([...opusStream(twenties(5)), ...Array.from({ length: 1 << 15 }, () => claim), Buffer.alloc(70_000, 255)]);
    expect(oggSeconds(costly)).toBeUndefined();
  });
});
