import { describe, expect, it } from "vitest";
import { audioInput, AudioRejected, audioSeconds, sniffAudio, wavSeconds, worstCaseSeconds } from "./audio.js";

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
  it.each([
    ["wav", wav(8000, 10)],
    ["flac", padded("fLaC")],
    ["ogg", padded("OggS")],
    ["webm", padded([0x1a, 0x45, 0xdf, 0xa3])],
    ["m4a", padded("\0\0\0 ftypM4A ")],
    ["mp3", padded("ID3\x04")],
    ["mp3", padded([0xff, 0xfb, 0x90])],
    ["aac", padded([0xff, 0xf1, 0x50])],
    ["flac", Buffer.concat([Buffer.from("ID3\x04\0\0\0\0\0\x02", "latin1"), Buffer.alloc(2), padded("fLaC")])],
    ["aac", Buffer.concat([Buffer.from("ID3\x04\0\0\0\0\0\0", "latin1"), padded([0xff, 0xf1, 0x50])])],
  ])("knows %s by its signature", (format, bytes) => {
    expect(sniffAudio(bytes)).toBe(format);
  });

  it("accepts names of the same family and refuses a container that is not what it is called", () => {
    expect(audioInput(padded("OggS"), "opus")).toMatchObject({ format: "opus", mediaType: "audio/ogg", filename: "audio.ogg" });
    expect(audioInput(padded("\0\0\0 ftypisom"), "mp4").mediaType).toBe("audio/mp4");
    expect(audioInput(wav(8000, 10), undefined)).toMatchObject({ format: "wav", filename: "audio.wav" });
    expect(() => audioInput(wav(8000, 10), "flac")).toThrow(AudioRejected);
    expect(() => audioInput(wav(8000, 10), "midi")).toThrow(/unknown audio format/);
    expect(() => audioInput(Buffer.alloc(100, 1), "wav")).toThrow(/not audio/);
    expect(() => audioInput(Buffer.alloc(4), "wav")).toThrow(/too short/);
  });

  it("reads a WAV's length from its header, also when a streaming writer left the size unset", () => {
    expect(wavSeconds(wav(16_000, 24_000))).toBe(1.5);
    expect(wavSeconds(wav(16_000, 16_000, 0xffffffff))).toBe(1);
    expect(wavSeconds(padded("OggS"))).toBeUndefined();
  });

  it("reads no length from a WAV whose byte rate disagrees with its rate, channels and sample size", () => {
    const lying = wav(16_000, 16_000);
    lying.writeUInt32LE(0xfffffff0, 28);
    expect(wavSeconds(lying)).toBeUndefined();
    expect(worstCaseSeconds(lying)).toBe(lying.length / 1000);
    const stereo = wav(8000, 16_000);
    stereo.writeUInt16LE(2, 22);
    stereo.writeUInt32LE(32_000, 28);
    expect(wavSeconds(stereo)).toBe(1);
  });

  it("bounds other containers at 8 kbit/s, or at the length read when that is longer", () => {
    expect(worstCaseSeconds(Buffer.concat([padded("OggS"), Buffer.alloc(9_964)]))).toBe(10);
    expect(worstCaseSeconds(wav(16_000, 8000))).toBe(0.5);
    // ADTS frames of 7 header bytes and one byte of silence: 1,024 samples at 8 kHz in 8 bytes.
    const silence = Buffer.concat(Array.from({ length: 1000 }, () => Buffer.from([0xff, 0xf1, 0x6c, 0x40, 0x01, 0x1f, 0xfc, 0x00])));
    expect(audioSeconds(silence)).toBeCloseTo(128, 6);
    expect(worstCaseSeconds(silence)).toBeCloseTo(128, 6);
  });
});
