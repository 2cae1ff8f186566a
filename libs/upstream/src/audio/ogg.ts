import { opusSamples } from "./codec-frames.js";
import { readVorbisSetup, vorbisIdentification, vorbisPacketSamples, type VorbisStream } from "./vorbis.js";

/** Ogg's CRC-32: polynomial 0x04C11DB7, most significant bit first, starting at zero, nothing XORed out. */
const crcTable = Uint32Array.from({ length: 256 }, (_, index) => {
  let crc = index << 24;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  return crc >>> 0;
});

/** Opus packets are timed on a 48 kHz clock. */
const opusRate = 48_000;

/** Header packets this reads whole are at most this long; real ones are a few kilobytes. */
const largestHeader = 1 << 20;

/** More logical streams than this are not a recording someone uploads; the length is not read. */
const mostStreams = 1024;

/** Logical streams whose first packet starts with one of these carry no audio and are ignored. */
const silentStreams = ["fishead\0", "\x80theora", "\x80kate\0\0\0"];

interface LogicalStream {
  opus?: { preSkip: number };
  vorbis?: VorbisStream;
  /** Complete packets so far, headers included. */
  packets: number;
  /** The packet being assembled: its pieces while it is a header, else its first two bytes. */
  open: boolean;
  pieces: Buffer[];
  first?: number;
  second?: number;
  size: number;
  /** Samples of the audio packets so far, and of the last one. */
  samples: number;
  lastSamples: number;
  /** The granule position of the stream's latest page when that page ends the stream, else undefined. */
  endGranule?: number;
  unreadable: boolean;
}

interface Page {
  flags: number;
  granule: bigint;
  serial: number;
  segments: number;
  body: number;
  end: number;
}

/** The page whose capture pattern is at `offset`, if its header and body lie within the bytes. */
function pageAt(bytes: Buffer, offset: number): Page | undefined {
  if (offset + 27 > bytes.length || bytes.readUInt32BE(offset) !== 0x4f676753 || bytes[offset + 4] !== 0) return undefined;
  const segments = bytes[offset + 26]!;
  const body = offset + 27 + segments;
  if (body > bytes.length) return undefined;
  let end = body;
  for (let index = offset + 27; index < body; index++) end += bytes[index]!;
  if (end > bytes.length) return undefined;
  return { flags: bytes[offset + 5]!, granule: bytes.readBigInt64LE(offset + 6), serial: bytes.readUInt32LE(offset + 14), segments, body, end };
}

/** Ogg's CRC-32 of `bytes[from, to)` continued from `crc`. */
function crc32(crc: number, bytes: Buffer, from: number, to: number): number {
  for (let index = from; index < to; index++) crc = ((crc << 8) ^ crcTable[((crc >>> 24) ^ bytes[index]!) & 0xff]!) >>> 0;
  return crc;
}

/** The CRC field as it is summed: zero. */
const crcField = Buffer.alloc(4);

/** Whether the page's CRC field matches its bytes (summed with the field read as zero). */
function crcMatches(bytes: Buffer, offset: number, end: number): boolean {
  const crc = crc32(crc32(crc32(0, bytes, offset, offset + 22), crcField, 0, 4), bytes, offset + 26, end);
  return crc === bytes.readUInt32LE(offset + 22);
}

/** The samples an Opus packet of the stream decodes to at 48 kHz, from its first two bytes. */
const opusPacketSamples = (toc: number | undefined, count: number | undefined, size: number): number => (toc === undefined ? 0 : opusSamples(toc, size >= 2 ? count : undefined));

/** A stream for the packet that opens it, or undefined where the codec is not one whose length this reads. */
function openStream(first: Buffer): LogicalStream | "silent" | undefined {
  const stream: LogicalStream = { packets: 0, open: false, pieces: [], size: 0, samples: 0, lastSamples: 0, unreadable: false };
  if (first.toString("latin1", 0, 8) === "OpusHead") return { ...stream, opus: { preSkip: 0 } };
  if (first.toString("latin1", 0, 7) === "\x01vorbis") return stream;
  return silentStreams.some((magic) => first.toString("latin1", 0, magic.length) === magic) ? "silent" : undefined;
}

/** Reads a header packet: Opus's identification header, Vorbis's identification and setup headers. */
function readHeader(stream: LogicalStream, index: number, packet: Buffer): void {
  if (stream.opus && index === 0) {
    if (packet.length < 19 || (packet[8]! & 0xf0) !== 0 || packet[9] === 0) stream.unreadable = true;
    else stream.opus.preSkip = packet.readUInt16LE(10);
  } else if (!stream.opus && index === 0) {
    stream.vorbis = vorbisIdentification(packet);
    if (!stream.vorbis) stream.unreadable = true;
  } else if (stream.vorbis && index === 2 && !readVorbisSetup(stream.vorbis, packet)) {
    stream.unreadable = true;
  }
}

const headerPackets = (stream: LogicalStream) => (stream.opus ? 2 : 3);

/** Whether packet `index` is a header this reads whole (identification, Vorbis's setup). */
const readWhole = (stream: LogicalStream, index: number) => index === 0 || (!stream.opus && index === 2);

/** Adds a piece of the packet being assembled, starting one if none is open. */
function addPiece(stream: LogicalStream, piece: Buffer): void {
  if (!stream.open) {
    stream.open = true;
    stream.pieces = [];
    stream.size = 0;
    stream.first = undefined;
    stream.second = undefined;
  }
  if (readWhole(stream, stream.packets)) {
    if (stream.size + piece.length > largestHeader) stream.unreadable = true;
    else stream.pieces.push(piece);
  }
  if (stream.size === 0) stream.first = piece[0];
  if (stream.size <= 1) stream.second = piece[1 - stream.size];
  stream.size += piece.length;
}

/** Ends the packet being assembled: reads it if it is a header, else counts its samples. */
function endPacket(stream: LogicalStream): void {
  stream.open = false;
  const index = stream.packets++;
  if (index < headerPackets(stream)) {
    if (readWhole(stream, index)) readHeader(stream, index, stream.pieces.length === 1 ? stream.pieces[0]! : Buffer.concat(stream.pieces));
    stream.pieces = [];
    return;
  }
  if (stream.size === 0) return;
  const samples = stream.opus ? opusPacketSamples(stream.first, stream.second, stream.size) : stream.vorbis ? vorbisPacketSamples(stream.vorbis, stream.first) : 0;
  stream.samples += samples;
  if (samples > 0) stream.lastSamples = samples;
}

/** Splits a page's body into packet pieces by its lacing values and adds them to the stream. */
function addPage(bytes: Buffer, offset: number, page: Page, stream: LogicalStream): void {
  const continued = (page.flags & 1) !== 0;
  // A packet left open before a page that does not continue it is decoded by ffmpeg (which appends the page's
  // first packet to it) and dropped by libogg (which decodes the page's first packet alone): both count.
  if (!continued && stream.open) endPacket(stream);
  // A page continuing a packet that was never started begins with a tail that no decoder can use.
  let tail = continued && !stream.open;
  let start = page.body;
  let end = page.body;
  for (let index = 0; index < page.segments; index++) {
    const lacing = bytes[offset + 27 + index]!;
    end += lacing;
    if (lacing === 255 && index < page.segments - 1) continue;
    if (!tail) addPiece(stream, bytes.subarray(start, end));
    if (lacing < 255) {
      if (!tail) endPacket(stream);
      tail = false;
    }
    start = end;
  }
  stream.endGranule = page.flags & 4 && page.granule !== -1n ? Number(page.granule) : undefined;
}

/**
 * The seconds a stream plays: its audio packets' samples. For Opus, the final granule position trims the end
 * by at most the last packet (ffmpeg and libopusfile trim no more than the final page), and the pre-skip comes
 * off the first Opus stream. A Vorbis stream is not trimmed: ffmpeg plays every sample of a stream whose audio
 * fits on the page that ends it.
 */
function playedSeconds(stream: LogicalStream, firstOpus: boolean): number {
  if (stream.opus) {
    const trim = stream.endGranule === undefined ? 0 : Math.min(Math.max(stream.samples - stream.endGranule, 0), stream.lastSamples);
    return Math.max(stream.samples - trim - (firstOpus ? stream.opus.preSkip : 0), 0) / opusRate;
  }
  return stream.vorbis ? stream.samples / stream.vorbis.sampleRate : 0;
}

/** The next place at or after `from` where a page's capture pattern starts; -1 where none does. */
const nextCapture = (bytes: Buffer, from: number) => bytes.indexOf("OggS", from, "latin1");

/** The logical streams of an Ogg file, in the order their first pages come, and whether one is of a codec this cannot read. */
interface Streams {
  opened: number;
  all: LogicalStream[];
  bySerial: Map<number, LogicalStream | "silent">;
  unknown: boolean;
}

/** Reads one page into its logical stream; a first page opens a stream, replacing one of the same serial number. */
function readPage(bytes: Buffer, offset: number, page: Page, streams: Streams): void {
  if (page.flags & 2) {
    streams.opened++;
    const opened = openStream(bytes.subarray(page.body, page.end));
    if (opened === undefined) streams.unknown = true;
    else if (opened !== "silent") streams.all.push(opened);
    streams.bySerial.set(page.serial, opened ?? "silent");
  }
  const stream = streams.bySerial.get(page.serial);
  if (stream && stream !== "silent") addPage(bytes, offset, page, stream);
}

/**
 * An Ogg Opus or Ogg Vorbis file's length in seconds: what decoders play, which is the samples of the audio
 * packets (an Opus packet's from its TOC byte, a Vorbis packet's from the block sizes of its mode and the one
 * before), summed over the Opus and Vorbis logical streams (streams chained one after another all play;
 * skeleton, Theora and Kate streams are ignored). Granule positions are written by the client and ffmpeg plays
 * packets whatever they say, so they never add length and only trim the end of an Opus stream, by at most its
 * last packet (see playedSeconds): a granule of -1, one that goes backwards, or one beyond the packets changes
 * nothing.
 * Pages are read where the previous page ends and, after junk, where a page with a valid CRC-32 starts; a page
 * at the place where the previous one ended is read even when its CRC-32 is wrong, as ffmpeg builds that do not
 * check it read it, and the bytes inside it are searched for valid pages as libogg does. A packet a truncated
 * file cuts short is not counted. Undefined where a logical stream is of another codec (Speex, FLAC) or has
 * headers a decoder would refuse, where no Opus or Vorbis stream is found, where more than 1024 streams begin,
 * and where junk makes the search for pages cost more than two passes over the bytes.
 */
export function oggSeconds(bytes: Buffer): number | undefined {
  const streams: Streams = { opened: 0, all: [], bySerial: new Map(), unknown: false };
  let budget = 2 * bytes.length + 262_144;
  let expected = 0;
  for (let offset = nextCapture(bytes, 0); offset !== -1; ) {
    budget -= 27 + (bytes[offset + 26] ?? 0);
    if (budget < 0) return undefined;
    const page = pageAt(bytes, offset);
    if (!page) {
      offset = nextCapture(bytes, offset + 1);
      continue;
    }
    budget -= page.end - offset;
    if (budget < 0) return undefined;
    const valid = crcMatches(bytes, offset, page.end);
    if (valid || offset === expected) {
      readPage(bytes, offset, page, streams);
      if (streams.opened > mostStreams) return undefined;
      expected = page.end;
    }
    offset = nextCapture(bytes, valid ? page.end : offset + 1);
  }
  if (streams.unknown || streams.all.length === 0 || streams.all.some((stream) => stream.unreadable)) return undefined;
  const firstOpus = streams.all.find((stream) => stream.opus);
  return streams.all.reduce((seconds, stream) => seconds + playedSeconds(stream, stream === firstOpus), 0);
}
