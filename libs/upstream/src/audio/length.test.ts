import { describe, expect, it } from "vitest";
import { pcmWav } from "../../../../tests/support/wav.js";
import { audioSeconds, sniffAudio, wavSeconds, worstCaseSeconds } from "./length.js";

/** A PCM WAV header (16-bit mono at `rate` Hz) followed by `samples` silent samples. */
const wav = (rate: number, samples: number, declared?: number): Buffer => pcmWav(rate, samples, { declared });

const padded = (head: number[] | string) => Buffer.concat([typeof head === "string" ? Buffer.from(head, "latin1") : Buffer.from(head), Buffer.alloc(32)]);

describe("audio lengths", () => {
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

  it("knows no container in fewer bytes than a signature, and reads no length there", () => {
    for (const bytes of [Buffer.alloc(0), Buffer.from([0xff]), Buffer.from("RIF", "latin1")]) {
      expect(sniffAudio(bytes)).toBeUndefined();
      expect(audioSeconds(bytes)).toBeUndefined();
      expect(worstCaseSeconds(bytes)).toBe(bytes.length / 1000);
    }
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

  it("reads no length from a WAV of compressed audio, whose bytes play longer than its PCM fields say", () => {
    // MPEG audio (format tag 0x55) at 16 kbit/s plays eight times longer than 16-bit PCM fields at 8 kHz say.
    const mpeg = wav(8000, 80_000);
    mpeg.writeUInt16LE(0x55, 20);
    expect(wavSeconds(mpeg)).toBeUndefined();
    expect(audioSeconds(mpeg)).toBeUndefined();
    expect(worstCaseSeconds(mpeg)).toBe(mpeg.length / 1000);
    for (const pcm of [1, 3, 6, 7]) {
      const clip = wav(8000, 8000);
      clip.writeUInt16LE(pcm, 20);
      expect(wavSeconds(clip)).toBe(1);
    }
    // The extensible header names its subformat at the start of a GUID after 24 bytes of its fields.
    const extensible = (subformat: number) => {
      const clip = wav(8000, 8000);
      const fmt = Buffer.alloc(48);
      clip.copy(fmt, 0, 12, 36);
      fmt.writeUInt32LE(40, 4);
      fmt.writeUInt16LE(0xfffe, 8);
      fmt.writeUInt16LE(22, 24);
      fmt.writeUInt16LE(subformat, 32);
      return Buffer.concat([clip.subarray(0, 12), fmt, clip.subarray(36)]);
    };
    expect(wavSeconds(extensible(1))).toBe(1);
    expect(wavSeconds(extensible(0x55))).toBeUndefined();
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
