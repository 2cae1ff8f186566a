/** An image's size in pixels, as its header states it. */
export interface ImageSize {
  width: number;
  height: number;
}

/** Base64 text alone, standard or URL-safe, with its padding at the end. */
const base64Text = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Bytes of base64 text decoded on demand: only the ranges a header reader asks for, so a large image costs
 * the few KB its header spans, not its whole payload. A range with whitespace or other text in it cannot be
 * read at an offset: it reads as nothing.
 */
class Base64Bytes {
  readonly length: number;

  constructor(private readonly text: string) {
    const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
    this.length = text.length % 4 === 0 ? (text.length / 4) * 3 - padding : 0;
  }

  /** Bytes `start` to `end` (cut to the payload's end), decoding only the base64 quads that hold them. */
  read(start: number, end: number): Buffer {
    const to = Math.min(end, this.length);
    if (start >= to) return Buffer.alloc(0);
    const first = Math.floor(start / 3);
    const quads = this.text.slice(first * 4, Math.ceil(to / 3) * 4);
    if (!base64Text.test(quads)) return Buffer.alloc(0);
    const decoded = Buffer.from(quads, "base64");
    return decoded.subarray(start - first * 3, to - first * 3);
  }
}

const positive = (width: number, height: number): ImageSize | undefined => (width > 0 && height > 0 ? { width, height } : undefined);

/** PNG: the signature, then the IHDR chunk's width and height (big-endian, at bytes 16 and 20). */
function png(head: Buffer): ImageSize | undefined {
  if (head.length < 24 || head.readUInt32BE(0) !== 0x89504e47 || head.toString("latin1", 12, 16) !== "IHDR") return undefined;
  return positive(head.readUInt32BE(16), head.readUInt32BE(20));
}

/** GIF: the logical screen's width and height (little-endian, at bytes 6 and 8). */
function gif(head: Buffer): ImageSize | undefined {
  if (head.length < 10 || !["GIF87a", "GIF89a"].includes(head.toString("latin1", 0, 6))) return undefined;
  return positive(head.readUInt16LE(6), head.readUInt16LE(8));
}

/** WebP: the RIFF container's first chunk, lossy (VP8), lossless (VP8L) or extended (VP8X). */
function webp(head: Buffer): ImageSize | undefined {
  if (head.length < 30 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WEBP") return undefined;
  switch (head.toString("latin1", 12, 16)) {
    case "VP8 ":
      // A key frame's start code, then 14-bit width and height.
      if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return undefined;
      return positive(head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff);
    case "VP8L": {
      // The signature byte, then width − 1 and height − 1 in 14 bits each.
      if (head[20] !== 0x2f) return undefined;
      const bits = head.readUInt32LE(21);
      return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    case "VP8X":
      // The canvas: width − 1 and height − 1 in 24 bits each.
      return positive(head.readUIntLE(24, 3) + 1, head.readUIntLE(27, 3) + 1);
    default:
      return undefined;
  }
}

/** The markers that start a frame (SOF0 to SOF15) and carry its size: not DHT (C4), JPG (C8) or DAC (CC). */
const startOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** Segments read before a JPEG is taken as unreadable: APPn metadata comes in a few, the frame soon after. */
const jpegSegments = 64;

/**
 * JPEG: the segments from the start of the image, skipped by their lengths (an EXIF thumbnail is skipped, not
 * decoded), to the first start of frame, whose height and width follow its length and precision. Reaching the
 * scan first, or a height of 0 (given later by a DNL segment), reads as unknown.
 */
function jpeg(bytes: Base64Bytes, head: Buffer): ImageSize | undefined {
  if (head.length < 4 || head[0] !== 0xff || head[1] !== 0xd8) return undefined;
  let offset = 2;
  for (let segment = 0; segment < jpegSegments; segment++) {
    const marker = bytes.read(offset, offset + 9);
    if (marker.length < 4 || marker[0] !== 0xff) return undefined;
    const code = marker[1]!;
    // Fill bytes, and markers that stand alone without a length.
    if (code === 0xff || code === 0x01 || (code >= 0xd0 && code <= 0xd7)) {
      offset += code === 0xff ? 1 : 2;
      continue;
    }
    if (code === 0xda || code === 0xd9) return undefined;
    if (startOfFrame(code)) return marker.length < 9 ? undefined : positive(marker.readUInt16BE(7), marker.readUInt16BE(5));
    offset += 2 + marker.readUInt16BE(2);
  }
  return undefined;
}

/**
 * The pixel size of a base64 image (a `data:` URL's or bare base64, as Anthropic's `source.data`) read from
 * its header: PNG, JPEG, WebP or GIF. Decodes the first 32 bytes, and for a JPEG the few bytes at the start of
 * each segment before its frame. Unknown for other formats, for text that is not base64 and for a header
 * that does not parse.
 */
export function imageSize(payload: string): ImageSize | undefined {
  const base64 = payload.startsWith("data:") ? payload.slice(payload.indexOf(",") + 1) : payload;
  const bytes = new Base64Bytes(base64);
  const head = bytes.read(0, 32);
  return png(head) ?? gif(head) ?? webp(head) ?? jpeg(bytes, head);
}
