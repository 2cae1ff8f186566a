import { aacSeconds } from "./aac.js";
import { flacSeconds } from "./flac.js";
import { id3End } from "./id3.js";
import { mp3Seconds } from "./mp3.js";
import { mp4Seconds } from "./mp4.js";
import { oggSeconds } from "./ogg.js";
import { webmSeconds } from "./webm.js";

/**
 * The container the bytes are, by their signature (wav, flac, ogg, webm, m4a, mp3, aac); undefined when they
 * are none we know.
 */
export function sniffAudio(bytes: Buffer): string | undefined {
  if (bytes.length < 4) return undefined;
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString("latin1");
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WAVE") return "wav";
  if (ascii(0, 4) === "fLaC") return "flac";
  if (ascii(0, 4) === "OggS") return "ogg";
  if (bytes.readUInt32BE(0) === 0x1a45dfa3) return "webm";
  if (ascii(4, 8) === "ftyp") return "m4a";
  // ID3 tags come before MP3 audio, and now and then before FLAC or ADTS: what follows them says which.
  const start = ascii(0, 3) === "ID3" ? id3End(bytes) : 0;
  if (start > 0 && ascii(start, start + 4) === "fLaC") return "flac";
  // An MPEG audio frame sync; ADTS (raw AAC) sets layer bits to zero.
  const [b0, b1 = 0] = [bytes[start], bytes[start + 1]];
  if (b0 === 0xff && (b1 & 0xe0) === 0xe0) return (b1 & 0x06) === 0 ? "aac" : "mp3";
  return start > 0 ? "mp3" : undefined;
}

/**
 * WAV format tags whose samples are as long as the fmt chunk's fields say: PCM, IEEE float, A-law and µ-law
 * (the extensible header's subformat names one of them the same way). Compressed data (MPEG audio is 0x55)
 * plays longer than its bytes at those rates.
 */
const uncompressed = new Set([0x0001, 0x0003, 0x0006, 0x0007]);
const extensible = 0xfffe;

/**
 * A PCM WAV file's exact length in seconds: its data chunk's bytes at the fmt chunk's sample rate, channels
 * and sample size, which is what decoders play. Undefined for other containers, odd headers, compressed data,
 * and a header whose byte rate disagrees with those fields: the byte rate is written by the client and read
 * by no decoder.
 */
export function wavSeconds(bytes: Buffer): number | undefined {
  if (sniffAudio(bytes) !== "wav") return undefined;
  let bytesPerSecond: number | undefined;
  for (let offset = 12; offset + 8 <= bytes.length; ) {
    const id = bytes.subarray(offset, offset + 4).toString("latin1");
    const size = bytes.readUInt32LE(offset + 4);
    if (id === "fmt " && offset + 24 <= bytes.length) {
      const tag = bytes.readUInt16LE(offset + 8);
      const format = tag === extensible && size >= 40 && offset + 34 <= bytes.length ? bytes.readUInt16LE(offset + 32) : tag;
      const channels = bytes.readUInt16LE(offset + 10);
      const sampleRate = bytes.readUInt32LE(offset + 12);
      const byteRate = bytes.readUInt32LE(offset + 16);
      const bitsPerSample = bytes.readUInt16LE(offset + 22);
      const derived = (sampleRate * channels * bitsPerSample) / 8;
      bytesPerSecond = derived > 0 && derived === byteRate && uncompressed.has(format) ? derived : undefined;
    }
    if (id === "data") {
      if (!bytesPerSecond) return undefined;
      // Streaming writers leave the size at its maximum; what is there is what plays.
      const length = Math.min(size, bytes.length - offset - 8);
      return length / bytesPerSecond;
    }
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

/** The length reader of each container, by what `sniffAudio` names. */
const lengthOf: Record<string, (bytes: Buffer) => number | undefined> = {
  wav: wavSeconds,
  mp3: mp3Seconds,
  flac: flacSeconds,
  ogg: oggSeconds,
  webm: webmSeconds,
  m4a: mp4Seconds,
  aac: aacSeconds,
};

/** Lengths already read, by upload: the hold, the charge and the estimate each ask for one. */
const read = new WeakMap<Buffer, number | undefined>();

/**
 * The audio's length in seconds as a decoder plays it, read from its frames or packets (PCM WAV, MP3, FLAC,
 * Ogg Opus and Vorbis, MP4/M4A, WebM/Matroska, ADTS AAC); headers the client writes (durations, sample
 * counts) never lower it. Undefined where the container is none of those or cannot be read.
 */
export function audioSeconds(bytes: Buffer): number | undefined {
  if (read.has(bytes)) return read.get(bytes);
  const format = sniffAudio(bytes);
  const seconds = format === undefined ? undefined : lengthOf[format]?.(bytes);
  read.set(bytes, seconds);
  return seconds;
}

/**
 * The most seconds the audio can last, for holding spend before a provider says: exact for PCM WAV; for
 * other containers the length at 8 kbit/s, below which speech codecs are not used for uploads, or the length
 * the gateway reads when that is longer (silence compresses far below it), so a charge by that length is
 * always held.
 */
export const worstCaseSeconds = (bytes: Buffer): number => wavSeconds(bytes) ?? Math.max(bytes.length / 1000, audioSeconds(bytes) ?? 0);
