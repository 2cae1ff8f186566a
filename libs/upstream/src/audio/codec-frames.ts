/**
 * What one coded packet of a codec decodes to, read from the bytes a decoder reads (not from container
 * timestamps): shared by the MP4 and Matroska length readers.
 */

/** Opus frame sizes in 48 kHz samples by TOC config (RFC 6716 §3.1): SILK 0–11, Hybrid 12–15, CELT 16–31. */
function opusFrameSamples(config: number): number {
  if (config < 12) return [480, 960, 1920, 2880][config & 3]!;
  if (config < 16) return [480, 960][config & 1]!;
  return [120, 240, 480, 960][config & 3]!;
}

/**
 * The 48 kHz samples an Opus packet decodes to, from its TOC byte and, for code 3, its frame count byte
 * (undefined when the packet has none). Zero for a packet a decoder rejects (no frame count, over 120 ms).
 */
export function opusSamples(toc: number, count: number | undefined): number {
  const code = toc & 3;
  const frames = code === 0 ? 1 : code < 3 ? 2 : count !== undefined ? count & 0x3f : 0;
  const samples = frames * opusFrameSamples(toc >> 3);
  return samples > 5760 ? 0 : samples;
}

/** The 48 kHz samples the Opus packet between `start` and `end` decodes to; zero for an empty one. */
export function opusPacketSamples(bytes: Buffer, start: number, end: number): number {
  if (start >= end || start >= bytes.length) return 0;
  return opusSamples(bytes[start]!, start + 1 < Math.min(end, bytes.length) ? bytes[start + 1] : undefined);
}

/** What a decoder plays per coded frame: samples at a sampling rate (for AAC, its core rate). */
export interface CodedFrames {
  sampleRate: number;
  frameSamples: number;
}

const aacRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8000, 7350];

/** Reads bits most significant first from a byte range; past the end it reads zeros and marks itself spent. */
function bitReader(bytes: Buffer, start: number, end: number) {
  let position = start * 8;
  const limit = Math.min(end, bytes.length) * 8;
  return {
    read(count: number): number {
      let value = 0;
      for (let i = 0; i < count; i++, position++) {
        const bit = position < limit ? (bytes[position >> 3]! >> (7 - (position & 7))) & 1 : 0;
        value = value * 2 + bit;
      }
      return value;
    },
    spent: () => position > limit,
  };
}

/**
 * An MPEG-4 AudioSpecificConfig's frame size and core sampling rate, for the AAC object types whose frames
 * are 1024 or 960 samples (512 or 480 for low delay). With SBR the decoder doubles both the rate and the
 * samples, so the core rate and frame size give the same seconds. Undefined for other object types.
 */
export function aacFrames(bytes: Buffer, start: number, end: number): CodedFrames | undefined {
  const bits = bitReader(bytes, start, end);
  const objectType = () => {
    const type = bits.read(5);
    return type === 31 ? 32 + bits.read(6) : type;
  };
  const rate = () => {
    const index = bits.read(4);
    return index === 15 ? bits.read(24) : (aacRates[index] ?? 0);
  };
  let type = objectType();
  const sampleRate = rate();
  bits.read(4);
  if (type === 5 || type === 29) {
    rate();
    type = objectType();
    if (type === 22) bits.read(4);
  }
  const general = [1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22];
  if (!general.includes(type) && type !== 23) return undefined;
  const shortFrames = bits.read(1) === 1;
  if (bits.spent() || sampleRate <= 0) return undefined;
  const frameSamples = type === 23 ? (shortFrames ? 480 : 512) : shortFrames ? 960 : 1024;
  return { sampleRate, frameSamples };
}
