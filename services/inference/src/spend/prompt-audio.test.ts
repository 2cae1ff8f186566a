import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { pcmWav } from "../../../../tests/support/wav.js";
import { audioTokenBound, audioTokensPerSecond } from "./prompt-audio.js";

/** Silent 16-bit mono PCM WAV at `rate` Hz lasting `seconds`. */
const wav = (rate: number, seconds: number): Buffer => pcmWav(rate, Math.round(rate * seconds));

/** `count` silent MPEG-1 Layer III frames at 44.1 kHz and 128 kbit/s: 417 bytes, 1,152 samples each. */
const mp3 = (count: number) => Buffer.concat(Array.from({ length: count }, () => Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x00]), Buffer.alloc(413)])));

const tokens = (bytes: Buffer) => audioTokenBound(bytes.toString("base64"));

describe("the tokens a prompt's audio clip is held at", () => {
  it("holds a PCM WAV at its exact length, whole seconds rounded up, at 32 tokens a second", () => {
    expect(audioTokensPerSecond).toBe(32);
    expect(tokens(wav(16_000, 30))).toBe(30 * 32);
    expect(tokens(wav(48_000, 600))).toBe(600 * 32);
    expect(tokens(wav(8000, 0.25))).toBe(32);
  });

  it("holds compressed audio at 8 kbit/s (a second per 1,000 bytes), above the length of a clip at a higher bitrate", () => {
    // 383 frames of 128 kbit/s MP3: 10 s in 159,711 bytes, held as 160 s.
    const clip = mp3(383);
    expect(tokens(clip)).toBe(Math.ceil(clip.length / 1000) * 32);
    expect(tokens(clip)).toBeGreaterThan(Math.ceil((383 * 1152) / 44_100) * 32);
  });

  it("holds at the length read when it is longer than the bytes say", () => {
    // ADTS frames of 7 header bytes and one byte of silence: 1,024 samples at 8 kHz in 8 bytes, 128 s in 8,000.
    const silence = Buffer.concat(Array.from({ length: 1000 }, () => Buffer.from([0xff, 0xf1, 0x6c, 0x40, 0x01, 0x1f, 0xfc, 0x00])));
    // Summed frame by frame the seconds come a hair above 128, and whole seconds round up.
    expect(tokens(silence)).toBeGreaterThanOrEqual(128 * 32);
    expect(tokens(silence)).toBeLessThanOrEqual(129 * 32);
  });

  it("holds bytes in no container it reads at a second per 1,000 bytes: raw 16-bit PCM at 8 kHz spends 16,000", () => {
    const pcm16 = Buffer.alloc(16_000 * 5, 7);
    expect(tokens(pcm16)).toBe(80 * 32);
    expect(tokens(pcm16)).toBeGreaterThanOrEqual(5 * 32);
    expect(audioTokenBound("AAAA")).toBe(32);
  });

  it("reads the clip behind a data: URL's prefix as the clip itself", () => {
    const clip = wav(16_000, 12).toString("base64");
    expect(audioTokenBound(`data:audio/wav;base64,${clip}`)).toBe(audioTokenBound(clip));
    expect(audioTokenBound(clip)).toBe(12 * 32);
  });

  it.each([
    { file: "tone-1.25s-8k.flac", plays: 1.25 },
    { file: "tone-1.25s-8k-opus.ogg", plays: 1.25 },
    { file: "tone-1.25s-8k-vorbis.ogg", plays: 1.28 },
    { file: "tone-1.25s-8k.aac", plays: 1.408 },
    { file: "tone-1s.m4a", plays: 1.064 },
    { file: "tone-1s-live.webm", plays: 1 },
  ])("holds real encoder output ($file) at no fewer tokens than the seconds a decoder plays", ({ file, plays }) => {
    const bytes = readFileSync(new URL(`../../../../libs/upstream/src/audio/fixtures/${file}`, import.meta.url));
    expect(tokens(bytes)).toBeGreaterThanOrEqual(Math.ceil(plays) * 32);
  });
});
