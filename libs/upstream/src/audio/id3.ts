/** Where the audio starts: after every ID3v2 tag (10 bytes of header, a syncsafe size, an optional footer). */
export function id3End(bytes: Buffer): number {
  let offset = 0;
  while (offset + 10 <= bytes.length && bytes.toString("latin1", offset, offset + 3) === "ID3") {
    const size = ((bytes[offset + 6]! & 0x7f) << 21) | ((bytes[offset + 7]! & 0x7f) << 14) | ((bytes[offset + 8]! & 0x7f) << 7) | (bytes[offset + 9]! & 0x7f);
    offset += 10 + size + (bytes[offset + 5]! & 0x10 ? 10 : 0);
  }
  return offset;
}
