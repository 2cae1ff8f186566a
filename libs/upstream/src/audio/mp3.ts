import { id3End } from "./id3.js";

/** Bitrates in kbit/s by index 1 to 14, per MPEG version and layer. */
const bitrates = {
  v1l1: [32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448],
  v1l2: [32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384],
  v1l3: [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320],
  v2l1: [32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256],
  v2l23: [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
};

/** Sample rates by index 0 to 2, per version bits (0: MPEG 2.5, 2: MPEG 2, 3: MPEG 1). */
const sampleRates: Record<number, number[]> = { 0: [11_025, 12_000, 8000], 2: [22_050, 24_000, 16_000], 3: [44_100, 48_000, 32_000] };

interface FrameHeader {
  mpeg1: boolean;
  mono: boolean;
  bitrate: number;
  sampleRate: number;
  samples: number;
  length: number;
}

/** The MPEG audio frame header at `offset`; undefined where there is none (or a free-format one, whose length is unknown). */
function frameAt(bytes: Buffer, offset: number): FrameHeader | undefined {
  if (offset + 4 > bytes.length || bytes[offset] !== 0xff) return undefined;
  const b1 = bytes[offset + 1]!;
  const b2 = bytes[offset + 2]!;
  if ((b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3;
  const layer = 4 - ((b1 >> 1) & 3);
  const bitrateIndex = b2 >> 4;
  const rate = sampleRates[version]?.[(b2 >> 2) & 3];
  if (layer === 4 || rate === undefined || bitrateIndex === 0 || bitrateIndex === 15) return undefined;
  const mpeg1 = version === 3;
  const table = mpeg1 ? [bitrates.v1l1, bitrates.v1l2, bitrates.v1l3][layer - 1]! : layer === 1 ? bitrates.v2l1 : bitrates.v2l23;
  const bitrate = table[bitrateIndex - 1]! * 1000;
  const padding = (b2 >> 1) & 1;
  const samples = layer === 1 ? 384 : layer === 3 && !mpeg1 ? 576 : 1152;
  const length = layer === 1 ? (Math.floor((12 * bitrate) / rate) + padding) * 4 : Math.floor(((samples / 8) * bitrate) / rate) + padding;
  return { mpeg1, mono: bytes[offset + 3]! >> 6 === 3, bitrate, sampleRate: rate, samples, length };
}

/** The audio frames a Xing/Info or VBRI header in the first frame counts; undefined without one. */
function countedFrames(bytes: Buffer, offset: number, first: FrameHeader): number | undefined {
  const sideInfo = first.mpeg1 ? (first.mono ? 17 : 32) : first.mono ? 9 : 17;
  const xing = offset + 4 + sideInfo;
  const tag = bytes.toString("latin1", xing, xing + 4);
  if ((tag === "Xing" || tag === "Info") && xing + 12 <= bytes.length && bytes.readUInt32BE(xing + 4) & 1) return bytes.readUInt32BE(xing + 8);
  const vbri = offset + 36;
  if (bytes.toString("latin1", vbri, vbri + 4) === "VBRI" && vbri + 18 <= bytes.length) return bytes.readUInt32BE(vbri + 14);
  return undefined;
}

/**
 * An MP3's length in seconds, read from its frames: the frame count of a Xing/Info or VBRI header times the
 * samples per frame at the first frame's sample rate, else (constant bitrate) its bytes at the first frame's
 * bitrate. Every header here is written by the client, so the length is never less than that of the complete
 * frames a decoder finds walking the file. Undefined when no MPEG audio frame starts the audio.
 */
export function mp3Seconds(bytes: Buffer): number | undefined {
  const start = id3End(bytes);
  const first = frameAt(bytes, start);
  if (!first) return undefined;
  const counted = countedFrames(bytes, start, first);
  // An ID3v1 tag's 128 bytes end the file.
  const end = bytes.length >= 128 && bytes.toString("latin1", bytes.length - 128, bytes.length - 125) === "TAG" ? bytes.length - 128 : bytes.length;
  const stated = counted === undefined ? ((end - start) * 8) / first.bitrate : (counted * first.samples) / first.sampleRate;
  return Math.max(stated, walkedSeconds(bytes, counted === undefined ? start : start + first.length, end));
}

/** The length of the complete frames between `from` and `end`, skipping bytes that start none as decoders do. */
function walkedSeconds(bytes: Buffer, from: number, end: number): number {
  let seconds = 0;
  for (let offset = from; offset < end; ) {
    const frame = frameAt(bytes, offset);
    if (!frame || offset + frame.length > end) {
      offset++;
      continue;
    }
    seconds += frame.samples / frame.sampleRate;
    offset += frame.length;
  }
  return seconds;
}
