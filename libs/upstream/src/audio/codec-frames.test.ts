import { describe, expect, it } from "vitest";
import { aacFrames, opusPacketSamples } from "./codec-frames.js";

const packet = (...bytes: number[]) => Buffer.from(bytes);
const samples = (bytes: Buffer) => opusPacketSamples(bytes, 0, bytes.length);

describe("Opus packet length", () => {
  it("reads the frame size of SILK, Hybrid and CELT configs from the TOC byte", () => {
    expect([0, 1, 2, 3].map((config) => samples(packet(config << 3)))).toEqual([480, 960, 1920, 2880]);
    expect([12, 13, 14, 15].map((config) => samples(packet(config << 3)))).toEqual([480, 960, 480, 960]);
    expect([16, 17, 18, 19, 31].map((config) => samples(packet(config << 3)))).toEqual([120, 240, 480, 960, 960]);
  });

  it("counts two frames for codes 1 and 2, and the frame count byte for code 3", () => {
    expect(samples(packet((31 << 3) | 1, 0, 0))).toBe(1920);
    expect(samples(packet((31 << 3) | 2, 1, 0))).toBe(1920);
    expect(samples(packet((31 << 3) | 3, 0x85))).toBe(5 * 960);
  });

  it("counts nothing for an empty packet, a code 3 packet without its count, or one over 120 ms", () => {
    expect(samples(packet())).toBe(0);
    expect(samples(packet((31 << 3) | 3))).toBe(0);
    expect(samples(packet((3 << 3) | 3, 3))).toBe(0);
    expect(samples(packet((31 << 3) | 3, 7))).toBe(0);
    expect(opusPacketSamples(packet(31 << 3), 0, 10)).toBe(960);
  });
});

describe("AAC AudioSpecificConfig", () => {
  const config = (...bytes: number[]) => aacFrames(Buffer.from(bytes), 0, bytes.length);

  it("reads the frame size and core rate of AAC-LC, HE-AAC, 960-sample and low-delay frames", () => {
    expect(config(0x12, 0x08)).toEqual({ sampleRate: 44_100, frameSamples: 1024 });
    expect(config(0x2b, 0x92, 0x08, 0x00)).toEqual({ sampleRate: 22_050, frameSamples: 1024 });
    expect(config(0x11, 0x8c)).toEqual({ sampleRate: 48_000, frameSamples: 960 });
    // Object type 23 (5 bits 10111), 48 kHz, mono, 480-sample frames.
    expect(config(0xb9, 0x8c)).toEqual({ sampleRate: 48_000, frameSamples: 480 });
  });

  it("reads an explicit 24-bit sampling rate", () => {
    // Object type 2, index 15, rate 16,000 (0x003E80), one channel, 1024-sample frames.
    expect(config(0x17, 0x80, 0x1f, 0x40, 0x08, 0x00)).toEqual({ sampleRate: 16_000, frameSamples: 1024 });
  });

  it("reads nothing from other object types, a reserved rate index or too few bytes", () => {
    expect(config(0x42, 0x08)).toBeUndefined();
    expect(config(0x16, 0x88)).toBeUndefined();
    expect(config(0x12)).toBeUndefined();
    expect(config()).toBeUndefined();
  });
});
