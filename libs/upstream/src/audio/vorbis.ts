/** Thrown inside this module when a header asks for more bits than it has; caught before returning. */
const outOfBits = new Error("the Vorbis header ends early");

/** Reads a Vorbis packet's bits, least significant bit of each byte first. */
class Bits {
  private position = 0;
  constructor(private readonly bytes: Buffer) {}

  read(count: number): number {
    if (this.position + count > this.bytes.length * 8) throw outOfBits;
    let value = 0;
    for (let got = 0; got < count; ) {
      const shift = this.position & 7;
      const take = Math.min(8 - shift, count - got);
      value += ((this.bytes[this.position >> 3]! >> shift) & ((1 << take) - 1)) * 2 ** got;
      got += take;
      this.position += take;
    }
    return value;
  }

  skip(count: number): void {
    if (this.position + count > this.bytes.length * 8) throw outOfBits;
    this.position += count;
  }
}

/** The number of bits needed to write `value` (0 for 0). */
const ilog = (value: number): number => (value > 0 ? Math.floor(Math.log2(value)) + 1 : 0);

/** The largest whole number whose `dimensions`-th power is at most `entries`. */
function lookupValues(entries: number, dimensions: number): number {
  let value = Math.floor(entries ** (1 / dimensions));
  while ((value + 1) ** dimensions <= entries) value++;
  while (value > 0 && value ** dimensions > entries) value--;
  return value;
}

/** Reads past a codebook's codeword lengths; false where they are not valid. */
function skipLengths(bits: Bits, entries: number): boolean {
  const ordered = bits.read(1) === 1;
  if (ordered) {
    // Runs of entries sharing one codeword length, each length one more than the last.
    let length = bits.read(5) + 1;
    for (let entry = 0; entry < entries; length++) {
      if (length > 32) return false;
      entry += bits.read(ilog(entries - entry));
      if (entry > entries) return false;
    }
    return true;
  }
  const sparse = bits.read(1) === 1;
  if (!sparse) bits.skip(5 * entries);
  else for (let entry = 0; entry < entries; entry++) if (bits.read(1)) bits.skip(5);
  return true;
}

/** Reads past one codebook; false where it is not one. */
function skipCodebook(bits: Bits): boolean {
  if (bits.read(24) !== 0x564342) return false;
  const dimensions = bits.read(16);
  const entries = bits.read(24);
  if (ilog(dimensions) + ilog(entries) > 24) return false;
  if (!skipLengths(bits, entries)) return false;
  const lookup = bits.read(4);
  if (lookup === 0) return true;
  if (lookup > 2 || dimensions === 0) return false;
  bits.skip(64);
  const valueBits = bits.read(4) + 1;
  bits.skip(1);
  bits.skip(valueBits * (lookup === 1 ? lookupValues(entries, dimensions) : entries * dimensions));
  return true;
}

/** Reads past one floor; false where its type is neither 0 nor 1. */
function skipFloor(bits: Bits): boolean {
  const type = bits.read(16);
  if (type === 0) {
    bits.skip(8 + 16 + 16 + 6 + 8);
    bits.skip(8 * (bits.read(4) + 1));
    return true;
  }
  if (type !== 1) return false;
  const partitionClasses = Array.from({ length: bits.read(5) }, () => bits.read(4));
  const classDimensions: number[] = [];
  for (let index = 0; index <= Math.max(-1, ...partitionClasses); index++) {
    classDimensions.push(bits.read(3) + 1);
    const subclasses = bits.read(2);
    if (subclasses) bits.skip(8);
    bits.skip(8 << subclasses);
  }
  bits.skip(2);
  const rangeBits = bits.read(4);
  for (const partitionClass of partitionClasses) bits.skip(rangeBits * classDimensions[partitionClass]!);
  return true;
}

/** Reads past one residue; false where its type is above 2. */
function skipResidue(bits: Bits): boolean {
  if (bits.read(16) > 2) return false;
  bits.skip(24 * 3);
  const classifications = bits.read(6) + 1;
  bits.skip(8);
  const cascades: number[] = [];
  for (let index = 0; index < classifications; index++) {
    const low = bits.read(3);
    cascades.push((bits.read(1) ? bits.read(5) * 8 : 0) + low);
  }
  for (const cascade of cascades) for (let bit = 0; bit < 8; bit++) if (cascade & (1 << bit)) bits.skip(8);
  return true;
}

/** Reads past one mapping; false where its type or reserved bits are not zero. */
function skipMapping(bits: Bits, channels: number): boolean {
  if (bits.read(16) !== 0) return false;
  const submaps = bits.read(1) ? bits.read(4) + 1 : 1;
  if (bits.read(1)) bits.skip((bits.read(8) + 1) * 2 * ilog(channels - 1));
  if (bits.read(2) !== 0) return false;
  if (submaps > 1) bits.skip(4 * channels);
  bits.skip(24 * submaps);
  return true;
}

/** Reads `count` items with `skip`, false when one of them is not valid. */
function skipAll(bits: Bits, count: number, skip: (bits: Bits) => boolean): boolean {
  for (let index = 0; index < count; index++) if (!skip(bits)) return false;
  return true;
}

/**
 * The block flag of each mode in a Vorbis setup header (true for a long block), read forward through its
 * codebooks, time-domain transforms, floors, residues and mappings as decoders read it; undefined where the
 * header is not one a decoder accepts so far as this reads it.
 */
function setupModes(packet: Buffer, channels: number): boolean[] | undefined {
  if (packet[0] !== 5 || packet.toString("latin1", 1, 7) !== "vorbis") return undefined;
  const bits = new Bits(packet);
  try {
    bits.skip(56);
    if (!skipAll(bits, bits.read(8) + 1, skipCodebook)) return undefined;
    const transforms = bits.read(6) + 1;
    for (let index = 0; index < transforms; index++) if (bits.read(16) !== 0) return undefined;
    if (!skipAll(bits, bits.read(6) + 1, skipFloor) || !skipAll(bits, bits.read(6) + 1, skipResidue)) return undefined;
    const mappings = bits.read(6) + 1;
    if (!skipAll(bits, mappings, (reader) => skipMapping(reader, channels))) return undefined;
    const modes = Array.from({ length: bits.read(6) + 1 }, () => {
      const long = bits.read(1) === 1;
      const valid = bits.read(16) === 0 && bits.read(16) === 0 && bits.read(8) < mappings;
      return valid ? long : undefined;
    });
    if (!bits.read(1) || modes.includes(undefined)) return undefined;
    return modes as boolean[];
  } catch (error) {
    if (error === outOfBits) return undefined;
    throw error;
  }
}

/** What a Vorbis stream's identification and setup headers say that packet lengths depend on. */
export interface VorbisStream {
  sampleRate: number;
  channels: number;
  /** Samples in a short and a long block. */
  blockSizes: [number, number];
  /** Per mode, whether its blocks are long; empty until the setup header is read. */
  modes: boolean[];
  /** The block size of the last audio packet, undefined before the first. */
  previous?: number;
}

/** A Vorbis identification header's fields; undefined where it is not one a decoder accepts. */
export function vorbisIdentification(packet: Buffer): VorbisStream | undefined {
  if (packet.length < 30 || packet[0] !== 1 || packet.toString("latin1", 1, 7) !== "vorbis" || packet.readUInt32LE(7) !== 0) return undefined;
  const channels = packet[11]!;
  const sampleRate = packet.readUInt32LE(12);
  const short = packet[28]! & 0x0f;
  const long = packet[28]! >> 4;
  if (channels === 0 || sampleRate === 0 || short < 6 || long > 13 || short > long || !(packet[29]! & 1)) return undefined;
  return { sampleRate, channels, blockSizes: [1 << short, 1 << long], modes: [] };
}

/** Reads the setup header's modes into `stream`; false where the header cannot be read. */
export function readVorbisSetup(stream: VorbisStream, packet: Buffer): boolean {
  const modes = setupModes(packet, stream.channels);
  if (!modes) return false;
  stream.modes = modes;
  return true;
}

/**
 * The samples a decoder returns for an audio packet starting with `first`: none for the first packet, then a
 * quarter of the previous block plus a quarter of this one. Packets that are not audio, or name a mode the
 * setup header does not have, are dropped by decoders and return none.
 */
export function vorbisPacketSamples(stream: VorbisStream, first: number | undefined): number {
  if (first === undefined || first & 1) return 0;
  const mode = (first >> 1) & ((1 << ilog(stream.modes.length - 1)) - 1);
  const long = stream.modes[mode];
  if (long === undefined) return 0;
  const size = stream.blockSizes[long ? 1 : 0];
  const samples = stream.previous === undefined ? 0 : (stream.previous + size) / 4;
  stream.previous = size;
  return samples;
}
