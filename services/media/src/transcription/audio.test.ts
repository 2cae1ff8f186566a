import { describe, expect, it } from "vitest";
import { audioInput, AudioRejected } from "./audio.js";

/** A PCM WAV header (16-bit mono at `rate` Hz) followed by `samples` silent samples. */
function wav(rate: number, samples: number, declared = samples * 2): Buffer {
  const bytes = Buffer.alloc(44 + samples * 2);
  bytes.write("RIFF", 0, "latin1");
  bytes.writeUInt32LE(Math.min(36 + declared, 0xffffffff), 4);
  bytes.write("WAVEfmt ", 8, "latin1");
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20);
  bytes.writeUInt16LE(1, 22);
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE(rate * 2, 28);
  bytes.writeUInt16LE(2, 32);
  bytes.writeUInt16LE(16, 34);
  bytes.write("data", 36, "latin1");
  bytes.writeUInt32LE(declared, 40);
  return bytes;
}

const padded = (head: number[] | string) => Buffer.concat([typeof head === "string" ? Buffer.from(head, "latin1") : Buffer.from(head), Buffer.alloc(32)]);

describe("audio containers", () => {
  it("accepts names of the same family and refuses a container that is not what it is called", () => {
    expect(audioInput(padded("OggS"), "opus")).toMatchObject({ format: "opus", mediaType: "audio/ogg", filename: "audio.ogg" });
    expect(audioInput(padded("\0\0\0 ftypisom"), "mp4").mediaType).toBe("audio/mp4");
    expect(audioInput(wav(8000, 10), undefined)).toMatchObject({ format: "wav", filename: "audio.wav" });
    expect(() => audioInput(wav(8000, 10), "flac")).toThrow(AudioRejected);
    expect(() => audioInput(wav(8000, 10), "midi")).toThrow(/unknown audio format/);
    expect(() => audioInput(Buffer.alloc(100, 1), "wav")).toThrow(/not audio/);
    expect(() => audioInput(Buffer.alloc(4), "wav")).toThrow(/too short/);
  });
});
