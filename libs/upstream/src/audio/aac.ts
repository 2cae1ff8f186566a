import { id3End } from "./id3.js";

/** Sample rates by ADTS sampling frequency index 0 to 12; 13 to 15 name none. */
const sampleRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8000, 7350];

/** Samples each raw data block of an ADTS frame decodes to. */
const blockSamples = 1024;

interface AdtsFrame {
  seconds: number;
  length: number;
}

/**
 * The ADTS frame header at `offset`; undefined where there is none. The layer bits are zero in every ADTS
 * header an encoder writes, so the first frame must have them; further frames are taken whatever they say,
 * as ffmpeg's ADTS reader does, which never reads them.
 */
function frameAt(bytes: Buffer, offset: number, firstFrame: boolean): AdtsFrame | undefined {
  if (offset + 7 > bytes.length || bytes[offset] !== 0xff) return undefined;
  const b1 = bytes[offset + 1]!;
  if ((b1 & 0xf0) !== 0xf0 || (firstFrame && (b1 & 0x06) !== 0)) return undefined;
  const rate = sampleRates[(bytes[offset + 2]! >> 2) & 0x0f];
  const length = ((bytes[offset + 3]! & 0x03) << 11) | (bytes[offset + 4]! << 3) | (bytes[offset + 5]! >> 5);
  if (rate === undefined || length < 7) return undefined;
  const blocks = (bytes[offset + 6]! & 0x03) + 1;
  return { seconds: (blocks * blockSamples) / rate, length };
}

/**
 * The length in seconds of raw AAC in ADTS frames: the complete frames a decoder finds walking from the first,
 * each 1024 samples for each of its raw data blocks at its own sample rate. Bytes that start no frame are
 * skipped one at a time, as decoders resynchronise; a frame cut short by the end of the file is not played,
 * so it is not counted. Undefined when no ADTS frame starts the audio.
 */
export function aacSeconds(bytes: Buffer): number | undefined {
  const start = id3End(bytes);
  if (!frameAt(bytes, start, true)) return undefined;
  // An ID3v1 tag's 128 bytes end the file.
  const end = bytes.length >= 128 && bytes.toString("latin1", bytes.length - 128, bytes.length - 125) === "TAG" ? bytes.length - 128 : bytes.length;
  let seconds = 0;
  for (let offset = start; offset < end; ) {
    const frame = frameAt(bytes, offset, false);
    if (!frame || offset + frame.length > end) {
      offset++;
      continue;
    }
    seconds += frame.seconds;
    offset += frame.length;
  }
  return seconds;
}
