import { sniffAudio } from "@switchyard/upstream";
import type { AudioInput } from "../providers/types.js";

/** Containers speech-to-text servers take, by the names clients use, with their MIME type and file extension. */
const containers: Record<string, { mediaType: string; extension: string }> = {
  wav: { mediaType: "audio/wav", extension: "wav" },
  mp3: { mediaType: "audio/mpeg", extension: "mp3" },
  mpeg: { mediaType: "audio/mpeg", extension: "mp3" },
  mpga: { mediaType: "audio/mpeg", extension: "mp3" },
  flac: { mediaType: "audio/flac", extension: "flac" },
  ogg: { mediaType: "audio/ogg", extension: "ogg" },
  oga: { mediaType: "audio/ogg", extension: "ogg" },
  opus: { mediaType: "audio/ogg", extension: "ogg" },
  webm: { mediaType: "audio/webm", extension: "webm" },
  m4a: { mediaType: "audio/mp4", extension: "m4a" },
  mp4: { mediaType: "audio/mp4", extension: "mp4" },
  aac: { mediaType: "audio/aac", extension: "aac" },
};
export const audioFormats = Object.keys(containers);

/** Formats that are one family: a caller saying `mp4` for an m4a file, or `opus` for Ogg, is right. */
const family = (format: string) => ({ mpeg: "mp3", mpga: "mp3", oga: "ogg", opus: "ogg", mp4: "m4a" })[format] ?? format;

export class AudioRejected extends Error {}

/**
 * Checks that the bytes are audio in a container we know and agree with the format the caller named
 * (or the file name's extension); returns what providers need to receive it.
 */
export function audioInput(bytes: Buffer, named: string | undefined): AudioInput {
  if (bytes.length < 12) throw new AudioRejected("the audio is too short to be a recording");
  const sniffed = sniffAudio(bytes);
  const format = named?.toLowerCase();
  if (format !== undefined && !containers[format]) {
    throw new AudioRejected(`unknown audio format ${named}; use one of ${audioFormats.join(", ")}`);
  }
  if (!sniffed) throw new AudioRejected(`the data is not audio in a known container (${audioFormats.join(", ")})`);
  if (format !== undefined && family(format) !== family(sniffed)) {
    throw new AudioRejected(`the data is ${sniffed} audio, not ${format}`);
  }
  const chosen = format ?? sniffed;
  const { mediaType, extension } = containers[chosen]!;
  return { bytes, format: chosen, mediaType, filename: `audio.${extension}` };
}
