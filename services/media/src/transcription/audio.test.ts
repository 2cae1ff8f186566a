import { describe, expect, it } from "vitest";
import { pcmWav } from "../../../../tests/support/wav.js";
import { audioInput, AudioRejected } from "./audio.js";

/** A PCM WAV header (16-bit mono at `rate` Hz) followed by `samples` silent samples. */
const wav = (rate: number, samples: number, declared?: number): Buffer => pcmWav(rate, samples, { declared });

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
