import { describe, expect, it } from "vitest";
import { imageSize } from "./image-size.js";

/** A PNG's signature and IHDR chunk (its CRC left zero: the reader does not check it), then filler bytes. */
function png(width: number, height: number, filler = 0): Buffer {
  const bytes = Buffer.alloc(33 + filler);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes, 0);
  bytes.writeUInt32BE(13, 8);
  bytes.write("IHDR", 12, "latin1");
  bytes.writeUInt32BE(width, 16);
  bytes.writeUInt32BE(height, 20);
  bytes.writeUInt8(8, 24);
  bytes.writeUInt8(2, 25);
  return bytes;
}

const segment = (marker: number, data: Buffer) => {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(data.length + 2, 2);
  return Buffer.concat([head, data]);
};

/** A JPEG: SOI, APP0 (JFIF), an APP1 of `exif` bytes, DQT, the frame (SOFn) with its size, DHT, SOS. */
function jpeg(width: number, height: number, { exif = 16, frame = 0xc0 } = {}): Buffer {
  const sof = Buffer.from([8, 0, 0, 0, 0, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from("JFIF\0\x01\x01\0\0\x01\0\x01\0\0", "latin1")),
    segment(0xe1, Buffer.concat([Buffer.from("Exif\0\0", "latin1"), Buffer.alloc(exif)])),
    segment(0xdb, Buffer.alloc(65)),
    segment(frame, sof),
    segment(0xc4, Buffer.alloc(20)),
    segment(0xda, Buffer.alloc(10)),
    Buffer.alloc(100),
    Buffer.from([0xff, 0xd9]),
  ]);
}

const riff = (chunk: string, data: Buffer) => {
  const bytes = Buffer.alloc(20 + data.length);
  bytes.write("RIFF", 0, "latin1");
  bytes.writeUInt32LE(bytes.length - 8, 4);
  bytes.write("WEBP", 8, "latin1");
  bytes.write(chunk, 12, "latin1");
  bytes.writeUInt32LE(data.length, 16);
  data.copy(bytes, 20);
  return bytes;
};

/** A lossy WebP: the VP8 key frame's tag, start code and 14-bit width and height. */
function webpLossy(width: number, height: number): Buffer {
  const data = Buffer.alloc(30);
  data.set([0x9d, 0x01, 0x2a], 3);
  data.writeUInt16LE(width, 6);
  data.writeUInt16LE(height, 8);
  return riff("VP8 ", data);
}

/** A lossless WebP: the VP8L signature, then width − 1 and height − 1 in 14 bits each. */
function webpLossless(width: number, height: number): Buffer {
  const data = Buffer.alloc(20);
  data[0] = 0x2f;
  data.writeUInt32LE(((width - 1) | ((height - 1) << 14)) >>> 0, 1);
  return riff("VP8L", data);
}

/** An extended WebP: the VP8X flags, then the canvas's width − 1 and height − 1 in 24 bits each. */
function webpExtended(width: number, height: number): Buffer {
  const data = Buffer.alloc(10);
  data.writeUIntLE(width - 1, 4, 3);
  data.writeUIntLE(height - 1, 7, 3);
  return riff("VP8X", data);
}

/** A GIF: its version, then the logical screen's width and height. */
function gif(width: number, height: number): Buffer {
  const bytes = Buffer.alloc(40);
  bytes.write("GIF89a", 0, "latin1");
  bytes.writeUInt16LE(width, 6);
  bytes.writeUInt16LE(height, 8);
  return bytes;
}

const dataUrl = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString("base64")}`;

describe("image size from the header", () => {
  it("reads PNG, JPEG, WebP and GIF sizes from data URLs and bare base64", () => {
    expect(imageSize(dataUrl("png", png(3072, 2048)))).toEqual({ width: 3072, height: 2048 });
    expect(imageSize(png(640, 480).toString("base64"))).toEqual({ width: 640, height: 480 });
    expect(imageSize(dataUrl("jpeg", jpeg(4032, 3024)))).toEqual({ width: 4032, height: 3024 });
    expect(imageSize(dataUrl("jpeg", jpeg(1200, 800, { frame: 0xc2 })))).toEqual({ width: 1200, height: 800 });
    expect(imageSize(dataUrl("webp", webpLossy(1920, 1080)))).toEqual({ width: 1920, height: 1080 });
    expect(imageSize(dataUrl("webp", webpLossless(16383, 2)))).toEqual({ width: 16383, height: 2 });
    expect(imageSize(dataUrl("webp", webpExtended(10000, 7000)))).toEqual({ width: 10000, height: 7000 });
    expect(imageSize(dataUrl("gif", gif(500, 300)))).toEqual({ width: 500, height: 300 });
  });

  it("skips a JPEG's metadata by its length to a frame far into the payload", () => {
    // A 60 KB EXIF segment (a thumbnail) before the frame, at each of the three offsets within a base64 quad.
    for (const exif of [60_000, 60_001, 60_002]) expect(imageSize(dataUrl("jpeg", jpeg(2000, 1500, { exif })))).toEqual({ width: 2000, height: 1500 });
  });

  it("reads nothing it cannot parse: other formats, a cut header, text that is not base64, a size of 0", () => {
    const unknown = [
      dataUrl("bmp", Buffer.concat([Buffer.from("BM"), Buffer.alloc(60)])),
      dataUrl("png", png(100, 100).subarray(0, 20)),
      dataUrl("jpeg", jpeg(800, 600).subarray(0, 40)),
      `data:image/png;base64,${png(100, 100).toString("base64").slice(0, 8)} ${png(100, 100).toString("base64").slice(8)}`,
      dataUrl("png", png(0, 100)),
      dataUrl("jpeg", jpeg(800, 0)),
      "https://example.com/cat.png",
    ];
    for (const payload of unknown) expect(imageSize(payload), payload.slice(0, 40)).toBeUndefined();
  });

  it("reads a large payload's header", () => {
    expect(imageSize(dataUrl("png", png(8000, 8000, 6_000_000)))).toEqual({ width: 8000, height: 8000 });
  });
});
