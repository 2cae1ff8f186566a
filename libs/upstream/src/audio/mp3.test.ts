import { describe, expect, it } from "vitest";
import { audioSeconds } from "./length.js";
import { mp3Seconds } from "./mp3.js";

/** A silent MPEG-1 Layer III frame at 44.1 kHz: bitrate index 5 is 64 kbit/s, 9 is 128, 14 is 320. */
function frame(index: number, kbps: number, mono = false, padded = false): Buffer {
  const bytes = Buffer.alloc(Math.floor((144 * kbps * 1000) / 44_100) + (padded ? 1 : 0));
  bytes.set([0xff, 0xfb, (index << 4) | (padded ? 0x02 : 0), mono ? 0xc0 : 0x00]);
  return bytes;
}
const frames = (count: number, index = 9, kbps = 128) => Buffer.concat(Array.from({ length: count }, () => frame(index, kbps)));
/** 128 kbit/s frames all padded: their bytes at the bitrate last a little longer than their samples. */
const padded = (count: number) => Buffer.concat(Array.from({ length: count }, () => frame(9, 128, false, true)));
const frameSeconds = 1152 / 44_100;

/** A first frame carrying a Xing (or Info) header that counts `count` frames. */
function xing(count: number, tag = "Xing", mono = false): Buffer {
  const first = frame(9, 128, mono);
  const at = mono ? 21 : 36;
  first.write(tag, at, "latin1");
  first.writeUInt32BE(1, at + 4);
  first.writeUInt32BE(count, at + 8);
  return first;
}

describe("MP3 length", () => {
  it("reads constant bitrate from the first frame's bitrate, behind an ID3 tag and before an ID3v1 tag", () => {
    const id3 = Buffer.concat([Buffer.from("ID3\x04\x00\x00\x00\x00\x00\x14", "latin1"), Buffer.alloc(20)]);
    const tag = Buffer.concat([Buffer.from("TAG", "latin1"), Buffer.alloc(125)]);
    const audio = padded(100);
    expect(mp3Seconds(Buffer.concat([id3, audio, tag]))).toBeCloseTo((audio.length * 8) / 128_000, 9);
    // Unpadded frames are shorter than the bitrate says: the frames a decoder finds are the length.
    expect(mp3Seconds(frames(100))).toBeCloseTo(100 * frameSeconds, 9);
  });

  it("reads variable bitrate from a Xing, Info or VBRI frame count", () => {
    const body = Buffer.concat([frames(50, 5, 64), frames(50, 14, 320)]);
    expect(mp3Seconds(Buffer.concat([xing(100), body]))).toBeCloseTo(100 * frameSeconds, 9);
    expect(mp3Seconds(Buffer.concat([xing(100, "Info", true), body]))).toBeCloseTo(100 * frameSeconds, 9);
    const vbri = frame(9, 128);
    vbri.write("VBRI", 36, "latin1");
    vbri.writeUInt32BE(100, 50);
    expect(mp3Seconds(Buffer.concat([vbri, body]))).toBeCloseTo(100 * frameSeconds, 9);
  });

  it("counts the frames a decoder finds when a header states less", () => {
    // A Xing header counting one frame before 200, and a 320 kbit/s first frame before 200 at 64 kbit/s.
    expect(mp3Seconds(Buffer.concat([xing(1), frames(200)]))).toBeCloseTo(200 * frameSeconds, 9);
    expect(mp3Seconds(Buffer.concat([frame(14, 320), frames(200, 5, 64)]))).toBeCloseTo(201 * frameSeconds, 9);
  });

  it("reads MPEG-2 frames of 576 samples", () => {
    // MPEG-2 Layer III, 64 kbit/s (index 8), 22.05 kHz: 72 × 64,000 / 22,050 bytes a frame.
    const mpeg2 = Buffer.alloc(Math.floor((72 * 64_000) / 22_050));
    mpeg2.set([0xff, 0xf3, 0x80, 0x00]);
    expect(mp3Seconds(Buffer.concat(Array.from({ length: 10 }, () => mpeg2)))).toBeCloseTo((10 * 576) / 22_050, 3);
  });

  it("reads no length from other data", () => {
    expect(mp3Seconds(Buffer.from("OggS and more bytes", "latin1"))).toBeUndefined();
    // ADTS (raw AAC) has layer bits of zero.
    expect(mp3Seconds(Buffer.from([0xff, 0xf1, 0x50, 0x80, 0, 0, 0, 0]))).toBeUndefined();
    expect(audioSeconds(Buffer.concat([Buffer.from("OggS", "latin1"), Buffer.alloc(100)]))).toBeUndefined();
    expect(audioSeconds(padded(10))).toBeCloseTo((padded(10).length * 8) / 128_000, 9);
  });
});
