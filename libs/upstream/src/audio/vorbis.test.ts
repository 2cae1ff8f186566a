import { describe, expect, it } from "vitest";
import { readVorbisSetup, vorbisIdentification, vorbisPacketSamples, type VorbisStream } from "./vorbis.js";

/** Writes bits least significant first, as Vorbis packs them. */
class BitWriter {
  private readonly bytes: number[] = [];
  private bit = 0;

  write(value: number, count: number): this {
    for (let index = 0; index < count; index++, this.bit++) {
      if (this.bit % 8 === 0) this.bytes.push(0);
      this.bytes[this.bytes.length - 1]! |= (Math.floor(value / 2 ** index) % 2) << this.bit % 8;
    }
    return this;
  }

  done = () => Buffer.from(this.bytes);
}

/** The common header of a Vorbis header packet: its type, then "vorbis". */
const start = (type: number) => [...Buffer.from("vorbis", "latin1")].reduce((writer, byte) => writer.write(byte, 8), new BitWriter().write(type, 8));

/** Writes `mode` flags (true for a long block), each on mapping 0, and the framing bit. */
function modes(writer: BitWriter, flags: boolean[]): Buffer {
  writer.write(flags.length - 1, 6);
  for (const long of flags) writer.write(long ? 1 : 0, 1).write(0, 16).write(0, 16).write(0, 8);
  return writer.write(1, 1).done();
}

/** A setup header with one of each part, in its simplest form, then `flags` modes. */
function simpleSetup(flags: boolean[]): Buffer {
  const writer = start(5).write(0, 8);
  // A codebook: sync, 1 dimension, 2 entries, not ordered, not sparse, two lengths, no lookup.
  writer.write(0x564342, 24).write(1, 16).write(2, 24).write(0, 1).write(0, 1).write(0, 5).write(0, 5).write(0, 4);
  writer.write(0, 6).write(0, 16);
  // Floor type 1 with no partitions; residue type 0 with one classification; mapping 0 with one submap.
  writer.write(0, 6).write(1, 16).write(0, 5).write(0, 2).write(0, 4);
  writer.write(0, 6).write(0, 16).write(0, 24).write(0, 24).write(0, 24).write(0, 6).write(0, 8).write(0, 3).write(0, 1);
  writer.write(0, 6).write(0, 16).write(0, 1).write(0, 1).write(0, 2).write(0, 8).write(0, 8).write(0, 8);
  return modes(writer, flags);
}

/** A setup header for two channels using the other forms: ordered, sparse and looked-up codebooks, floor 0, coupling, submaps. */
function richSetup(flags: boolean[]): Buffer {
  const writer = start(5).write(2, 8);
  // Ordered: 8 entries of length 3, then lookup type 1 with 2 dimensions: 2 values of 5 bits.
  writer.write(0x564342, 24).write(2, 16).write(8, 24).write(1, 1).write(2, 5).write(8, 4);
  writer.write(1, 4).write(0, 32).write(0, 32).write(4, 4).write(0, 1).write(0b1010110101, 10);
  // Sparse: entries 1 and 3 of 3 used; lookup type 2: 3 entries of 1 dimension, 3 values of 2 bits.
  writer.write(0x564342, 24).write(1, 16).write(3, 24).write(0, 1).write(1, 1).write(1, 1).write(4, 5).write(0, 1).write(1, 1).write(4, 5);
  writer.write(2, 4).write(0, 32).write(0, 32).write(1, 4).write(1, 1).write(0b111001, 6);
  // Not ordered, not sparse, no lookup, 4 entries.
  writer.write(0x564342, 24).write(1, 16).write(4, 24).write(0, 1).write(0, 1).write(0, 20).write(0, 4);
  writer.write(1, 6).write(0, 16).write(0, 16);
  // Floor 1: two partitions of classes 0 and 1; class 0 has no subclasses, class 1 has two; range bits 7.
  writer.write(1, 6).write(1, 16).write(2, 5).write(0, 4).write(1, 4);
  writer.write(1, 3).write(0, 2).write(1, 8);
  writer.write(0, 3).write(1, 2).write(2, 8).write(0, 8).write(1, 8);
  writer.write(1, 2).write(7, 4).write(5, 7).write(9, 7).write(60, 7);
  // Floor 0: order, rate, bark map size, amplitude bits and offset, then two books.
  writer.write(0, 16).write(8, 8).write(8000, 16).write(256, 16).write(6, 6).write(100, 8).write(1, 4).write(0, 8).write(1, 8);
  // Residue type 2, two classifications: the first with cascade bits 0b1001_0001 (high bits written).
  writer.write(0, 6).write(2, 16).write(0, 24).write(100, 24).write(31, 24).write(1, 6).write(2, 8);
  writer.write(0b001, 3).write(1, 1).write(0b10010, 5).write(0, 3).write(0, 1);
  writer.write(0, 8).write(1, 8).write(2, 8);
  // Mapping: two submaps, one coupling step between channels 0 and 1 (1 bit each), a mux per channel.
  writer.write(0, 6).write(0, 16).write(1, 1).write(1, 4).write(1, 1).write(0, 8).write(0, 1).write(1, 1).write(0, 2);
  writer.write(0, 4).write(1, 4).write(0, 8).write(0, 8).write(0, 8).write(0, 8).write(1, 8).write(0, 8);
  return modes(writer, flags);
}

/** An identification header: `channels` at `rate` with block sizes 2^short and 2^long. */
function identification(rate = 8000, channels = 1, short = 8, long = 11): Buffer {
  const packet = Buffer.alloc(30);
  packet.write("\x01vorbis", 0, "latin1");
  packet[11] = channels;
  packet.writeUInt32LE(rate, 12);
  packet[28] = (long << 4) | short;
  packet[29] = 1;
  return packet;
}

function stream(setup: Buffer, channels = 1): VorbisStream {
  const read = vorbisIdentification(identification(8000, channels))!;
  expect(readVorbisSetup(read, setup)).toBe(true);
  return read;
}

/** The samples of packets whose first bytes are `firsts`. */
const samples = (read: VorbisStream, firsts: (number | undefined)[]) => firsts.map((first) => vorbisPacketSamples(read, first));

describe("Vorbis headers and packet lengths", () => {
  it("reads the identification header's rate, channels and block sizes", () => {
    expect(vorbisIdentification(identification(44_100, 2, 8, 11))).toMatchObject({ sampleRate: 44_100, channels: 2, blockSizes: [256, 2048] });
    for (const bad of [identification(0), identification(8000, 0), identification(8000, 1, 5, 11), identification(8000, 1, 11, 8), identification(8000, 1, 8, 14)]) {
      expect(vorbisIdentification(bad)).toBeUndefined();
    }
    const unframed = identification();
    unframed[29] = 0;
    expect(vorbisIdentification(unframed)).toBeUndefined();
    expect(vorbisIdentification(identification().subarray(0, 29))).toBeUndefined();
  });

  it("returns nothing for the first audio packet, then a quarter of the previous block and of this one", () => {
    const read = stream(simpleSetup([false, true]));
    // Bit 0 is 0 for audio; bit 1 is the mode: 0 short (256), 1 long (2048).
    expect(samples(read, [0b10, 0b10, 0b00, 0b00, 0b10])).toEqual([0, 1024, 576, 128, 576]);
  });

  it("reads the mode from the bits the mode count needs, and drops packets that are not audio or name no mode", () => {
    const read = stream(simpleSetup([false, true, false]));
    expect(samples(read, [0b010, 0b010, 0b110, 0b100, 0b001, undefined, 0b000])).toEqual([0, 1024, 0, 576, 0, 0, 128]);
    const single = stream(simpleSetup([true]));
    expect(samples(single, [0xfe, 0xfe])).toEqual([0, 1024]);
  });

  it("reads every form of codebook, floor, residue and mapping forward to the modes", () => {
    const read = stream(richSetup([true, false]), 2);
    expect(read.modes).toEqual([true, false]);
    expect(samples(read, [0b00, 0b10, 0b10])).toEqual([0, 576, 128]);
  });

  it("refuses a setup header that ends early, lacks its framing bit or breaks a rule decoders check", () => {
    const whole = richSetup([true, false]);
    for (let length = 0; length < whole.length; length++) {
      expect(readVorbisSetup(vorbisIdentification(identification(8000, 2))!, whole.subarray(0, length))).toBe(false);
    }
    const noFraming = simpleSetup([false, true]);
    noFraming[noFraming.length - 1] = 0;
    expect(readVorbisSetup(vorbisIdentification(identification())!, noFraming)).toBe(false);
    const badSync = simpleSetup([false]);
    badSync[8] = badSync[8]! ^ 0xff;
    expect(readVorbisSetup(vorbisIdentification(identification())!, badSync)).toBe(false);
    expect(readVorbisSetup(vorbisIdentification(identification())!, identification())).toBe(false);
  });
});
