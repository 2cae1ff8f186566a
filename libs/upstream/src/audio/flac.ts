import { id3End } from "./id3.js";

/** Sample rates by frame header code 1 to 11; 0 means STREAMINFO's, 12 to 14 are written after the header. */
const frameRates = [0, 88_200, 176_400, 192_000, 8000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000];

/** Bits per sample by frame header code; 0 means STREAMINFO's, 3 is reserved. */
const frameBits = [0, 8, 12, 0, 16, 20, 24, 32];

/** CRC-8 with polynomial x^8 + x^2 + x + 1, which guards each frame header. */
const crc8Table = Uint8Array.from({ length: 256 }, (_, index) => {
  let crc = index;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  return crc;
});

interface StreamInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Where the frames start: after the last metadata block. */
  framesFrom: number;
}

/** STREAMINFO, which must be the first metadata block, and where the metadata blocks end. */
function streamInfo(bytes: Buffer, start: number): StreamInfo | undefined {
  const info = start + 8;
  if (bytes.toString("latin1", start, start + 4) !== "fLaC" || info + 34 > bytes.length) return undefined;
  const length = bytes.readUIntBE(start + 5, 3);
  if ((bytes[start + 4]! & 0x7f) !== 0 || length < 34) return undefined;
  const sampleRate = (bytes[info + 10]! << 12) | (bytes[info + 11]! << 4) | (bytes[info + 12]! >> 4);
  const channels = ((bytes[info + 12]! >> 1) & 0x07) + 1;
  const bitsPerSample = (((bytes[info + 12]! & 1) << 4) | (bytes[info + 13]! >> 4)) + 1;
  if (sampleRate === 0) return undefined;
  let offset = start + 4;
  let last = false;
  while (!last && offset + 4 <= bytes.length) {
    last = (bytes[offset]! & 0x80) !== 0;
    offset += 4 + bytes.readUIntBE(offset + 1, 3);
  }
  // Block lengths that run past the end name no place where frames start; they are looked for after STREAMINFO.
  return { sampleRate, channels, bitsPerSample, framesFrom: last && offset <= bytes.length ? offset : info + 34 };
}

/** The length of the UTF-8 style coded frame or sample number starting with `lead` (at most 7 bytes, for 36 bits); 0 if none. */
function codedNumberLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead < 0xc0 || lead === 0xff) return 0;
  if (lead === 0xfe) return 7;
  let length = 0;
  for (let bit = 0x80; lead & bit; bit >>= 1) length++;
  return length;
}

/**
 * Whether `header` can start a subframe: a zero padding bit, then a type that is not reserved (0 constant,
 * 1 verbatim, 8 to 12 fixed predictor, 32 to 63 LPC). Every decoder refuses a frame whose first subframe fails this.
 */
function subframeStarts(header: number | undefined): boolean {
  if (header === undefined || header & 0x80) return false;
  const type = header >> 1;
  return type <= 1 || (type >= 8 && type <= 12) || type >= 32;
}

/** The seconds of the frame whose header starts at `offset`; undefined where no valid frame header starts. */
function frameSeconds(bytes: Buffer, offset: number, info: StreamInfo): number | undefined {
  if (offset + 6 > bytes.length || bytes[offset] !== 0xff || (bytes[offset + 1]! & 0xfe) !== 0xf8) return undefined;
  const sizeCode = bytes[offset + 2]! >> 4;
  const rateCode = bytes[offset + 2]! & 0x0f;
  const channelCode = bytes[offset + 3]! >> 4;
  const bitsCode = (bytes[offset + 3]! >> 1) & 0x07;
  if (sizeCode === 0 || rateCode === 15 || channelCode > 10 || bitsCode === 3 || bytes[offset + 3]! & 1) return undefined;
  const numberLength = codedNumberLength(bytes[offset + 4]!);
  if (numberLength === 0) return undefined;
  let at = offset + 4 + numberLength;
  if (at > bytes.length) return undefined;
  for (let index = offset + 5; index < at; index++) if ((bytes[index]! & 0xc0) !== 0x80) return undefined;
  const extraSize = sizeCode === 6 ? 1 : sizeCode === 7 ? 2 : 0;
  const extraRate = rateCode === 12 ? 1 : rateCode === 13 || rateCode === 14 ? 2 : 0;
  if (at + extraSize + extraRate >= bytes.length) return undefined;
  const samples = extraSize ? bytes.readUIntBE(at, extraSize) + 1 : sizeCode === 1 ? 192 : sizeCode <= 5 ? 576 << (sizeCode - 2) : 256 << (sizeCode - 8);
  at += extraSize;
  const ownRate = rateCode === 12 ? bytes[at]! * 1000 : rateCode === 13 ? bytes.readUInt16BE(at) : rateCode === 14 ? bytes.readUInt16BE(at) * 10 : frameRates[rateCode]!;
  at += extraRate;
  let crc = 0;
  for (let index = offset; index < at; index++) crc = crc8Table[crc ^ bytes[index]!]!;
  if (crc !== bytes[at] || !subframeStarts(bytes[at + 1])) return undefined;
  // The smallest frame a decoder can finish: one constant subframe a channel (an 8-bit subframe header and one
  // sample; a side channel's sample has one bit more), padded to a byte, then the 16-bit CRC.
  const bits = frameBits[bitsCode] || info.bitsPerSample;
  const channels = channelCode < 8 ? channelCode + 1 : 2;
  const smallest = Math.ceil((channels * (8 + bits) + (channelCode < 8 ? 0 : 1)) / 8) + 2;
  if (at + 1 + smallest > bytes.length) return undefined;
  // Decoders differ on whose rate plays (ffmpeg takes the frame's, others STREAMINFO's): the slower one is charged.
  const rate = ownRate > 0 ? Math.min(ownRate, info.sampleRate) : info.sampleRate;
  return samples / rate;
}

/**
 * A FLAC file's length in seconds: the frames a decoder plays, each its header's block size at its sample
 * rate. STREAMINFO's total sample count is written by the client and read by no decoder that plays the frames,
 * so it is not used. Every place after the metadata blocks where a frame header with a valid CRC-8 starts is
 * counted: frames carry no length, and ffmpeg plays a frame whose CRC-16 is wrong and decodes leftover bytes of
 * a frame as further frames, so neither the CRC-16 nor the spacing of headers can show that a header is not
 * played without letting a client hide frames. A header inside audio data passes the CRC-8, field and subframe
 * checks by chance about once in 200 million bytes of encoded noise, adding one block. A frame cut short by the
 * end of the file counts when the bytes left could hold a complete frame (it cannot be told from a complete
 * frame with a wrong CRC-16, which ffmpeg plays) and not when they could not. Undefined without a valid
 * STREAMINFO block or when no frame is found.
 */
export function flacSeconds(bytes: Buffer): number | undefined {
  const info = streamInfo(bytes, id3End(bytes));
  if (!info) return undefined;
  let seconds = 0;
  let found = false;
  for (let offset = bytes.indexOf(0xff, info.framesFrom); offset !== -1; offset = bytes.indexOf(0xff, offset + 1)) {
    const frame = frameSeconds(bytes, offset, info);
    if (frame === undefined) continue;
    seconds += frame;
    found = true;
  }
  return found ? seconds : undefined;
}
