import { aacFrames, opusPacketSamples } from "./codec-frames.js";

/**
 * The playing length of WebM/Matroska audio, read from its blocks: per audio track, the end of its last block
 * (Cluster Timecode plus the block's relative timecode, times the Segment's TimecodeScale, plus the block's
 * own duration), and never less than what its packets decode to where the codec says (Opus from each packet's
 * TOC byte, AAC from the CodecPrivate AudioSpecificConfig, PCM from the frame bytes), since timestamps are
 * written by the client and decoders do not play by them.
 *
 * The Info `Duration` is a client-written summary that browsers' MediaRecorder leaves out; it is not read: it
 * could only lower the length below the blocks, or raise it to audio that is not in the file.
 */

const ids = {
  ebml: 0x1a45dfa3,
  docType: 0x4282,
  segment: 0x18538067,
  info: 0x1549a966,
  timecodeScale: 0x2ad7b1,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  codecId: 0x86,
  codecPrivate: 0x63a2,
  defaultDuration: 0x23e383,
  codecDelay: 0x56aa,
  audio: 0xe1,
  samplingFrequency: 0xb5,
  channels: 0x9f,
  bitDepth: 0x6264,
  cluster: 0x1f43b675,
  timecode: 0xe7,
  simpleBlock: 0xa3,
  blockGroup: 0xa0,
  block: 0xa1,
  blockDuration: 0x9b,
  discardPadding: 0x75a2,
};
const clusterId = Buffer.from([0x1f, 0x43, 0xb6, 0x75]);

interface Element {
  id: number;
  start: number;
  /** Where the element ends; undefined for an unknown size (all ones). */
  end: number | undefined;
}

/** An EBML variable-length integer at `offset`: its value (with the length marker for IDs) and byte length. */
function vint(bytes: Buffer, offset: number, marker: boolean): { value: number; length: number; unknown: boolean } | undefined {
  const first = bytes[offset];
  if (!first || offset + Math.clz32(first) - 23 > bytes.length) return undefined;
  const length = Math.clz32(first) - 23;
  let value = marker ? first : first & (0xff >> length);
  let ones = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + bytes[offset + i]!;
    ones &&= bytes[offset + i] === 0xff;
  }
  return { value, length, unknown: ones };
}

/** The element header at `offset`; its end may lie past the bytes there are. */
function elementAt(bytes: Buffer, offset: number): Element | undefined {
  const id = vint(bytes, offset, true);
  if (!id || id.length > 4) return undefined;
  const size = vint(bytes, offset + id.length, false);
  if (!size) return undefined;
  const start = offset + id.length + size.length;
  return { id: id.value, start, end: size.unknown ? undefined : start + size.value };
}

/** The children of a known-size element that lie inside it; stops at one that cannot be read or does not fit. */
function* children(bytes: Buffer, parent: Element): Generator<Element> {
  const end = Math.min(parent.end ?? parent.start, bytes.length);
  for (let offset = parent.start; offset < end; ) {
    const element = elementAt(bytes, offset);
    if (!element || element.end === undefined || element.end > end) return;
    yield element;
    offset = element.end;
  }
}

const unsigned = (bytes: Buffer, element: Element): number => {
  let value = 0;
  for (let at = element.start; at < (element.end ?? at) && at < element.start + 8; at++) value = value * 256 + bytes[at]!;
  return value;
};
const signed = (bytes: Buffer, element: Element): number => {
  const size = Math.min((element.end ?? element.start) - element.start, 8);
  const value = unsigned(bytes, element);
  return size > 0 && bytes[element.start]! & 0x80 ? value - 2 ** (8 * size) : value;
};
const float = (bytes: Buffer, element: Element): number => {
  const size = (element.end ?? 0) - element.start;
  return size === 4 ? bytes.readFloatBE(element.start) : size === 8 ? bytes.readDoubleBE(element.start) : 0;
};

/**
 * Calls `visit` on each element in file order, stepping into every Segment and Cluster (whatever their size,
 * so unknown sizes need nothing more) and over every other element. Where an element cannot be read or runs
 * past the end, it goes on from the next Cluster ID, as demuxers resynchronise. False when the file does not
 * open with an EBML header of a Matroska or WebM document.
 */
function walk(bytes: Buffer, visit: (element: Element) => void): boolean {
  const header = elementAt(bytes, 0);
  if (!header || header.id !== ids.ebml || header.end === undefined || header.end > bytes.length) return false;
  for (const element of children(bytes, header)) {
    const docType = element.id === ids.docType ? bytes.toString("latin1", element.start, element.end) : undefined;
    if (docType !== undefined && docType !== "webm" && docType !== "matroska") return false;
  }
  for (let offset = header.end; offset < bytes.length; ) {
    const element = elementAt(bytes, offset);
    const entered = element?.id === ids.segment || element?.id === ids.cluster;
    const fits = element?.end !== undefined && element.end <= bytes.length;
    if (element && (entered || fits)) visit(element);
    if (element && entered) offset = element.start;
    else if (element?.end !== undefined && fits) offset = element.end;
    else {
      const next = bytes.indexOf(clusterId, offset + 1);
      offset = next < 0 ? bytes.length : next;
    }
  }
  return true;
}

interface Track {
  number: number;
  codec: string;
  /** Nanoseconds a frame lasts, by DefaultDuration. */
  defaultDuration?: number;
  /** Nanoseconds the decoder drops from the start (CodecDelay, Opus pre-skip). */
  codecDelay: number;
  /** Nanoseconds the frame between `start` and `end` decodes to; undefined when the codec does not say. */
  frameDuration?: (bytes: Buffer, start: number, end: number) => number;
  /** Whether every frame plays whole (PCM); a compressed codec's last frame may be cut short. */
  wholeFrames: boolean;
}

function readTrack(bytes: Buffer, entry: Element): Track | undefined {
  let number = 0;
  let type = 0;
  let codec = "";
  let defaultDuration: number | undefined;
  let codecDelay = 0;
  let config: Element | undefined;
  let rate = 0;
  let channels = 1;
  let depth = 0;
  for (const element of children(bytes, entry)) {
    if (element.id === ids.trackNumber) number = unsigned(bytes, element);
    else if (element.id === ids.trackType) type = unsigned(bytes, element);
    else if (element.id === ids.codecId) codec = bytes.toString("latin1", element.start, element.end).replace(/\0+$/, "");
    else if (element.id === ids.defaultDuration) defaultDuration = unsigned(bytes, element) || undefined;
    else if (element.id === ids.codecDelay) codecDelay = unsigned(bytes, element);
    else if (element.id === ids.codecPrivate) config = element;
    else if (element.id === ids.audio) {
      for (const field of children(bytes, element)) {
        if (field.id === ids.samplingFrequency) rate = float(bytes, field);
        else if (field.id === ids.channels) channels = unsigned(bytes, field);
        else if (field.id === ids.bitDepth) depth = unsigned(bytes, field);
      }
    }
  }
  if (type !== 2 || number === 0) return undefined;
  const frameDuration = codecDuration(bytes, codec, config, rate * channels * (depth / 8));
  return { number, codec, defaultDuration, codecDelay, frameDuration, wholeFrames: codec.startsWith("A_PCM/") };
}

/** How long one frame of the codec plays, from its bytes, for the codecs whose frames say. */
function codecDuration(bytes: Buffer, codec: string, config: Element | undefined, pcmBytesPerSecond: number): Track["frameDuration"] {
  if (codec === "A_OPUS") return (data, start, end) => (opusPacketSamples(data, start, end) * 1e9) / 48_000;
  if (codec.startsWith("A_AAC") && config) {
    const aac = aacFrames(bytes, config.start, config.end ?? config.start);
    if (aac) return () => (aac.frameSamples * 1e9) / aac.sampleRate;
  }
  const pcm = codec === "A_PCM/INT/LIT" || codec === "A_PCM/INT/BIG" || codec === "A_PCM/FLOAT/IEEE";
  if (pcm && pcmBytesPerSecond > 0 && Number.isFinite(pcmBytesPerSecond)) return (_data, start, end) => ((end - start) * 1e9) / pcmBytesPerSecond;
  return undefined;
}

/** What one audio track's blocks add up to, in nanoseconds. */
interface Measure {
  /** The latest end of a block whose duration is known. */
  end: number;
  /** The latest start of a block whose duration is not known, and the last gap between starts seen. */
  untimedStart?: number;
  lastStart?: number;
  gap?: number;
  /** The sum of what the track's frames decode to, where the codec says, and what the last frame adds to it. */
  decoded: number;
  lastFrame: number;
}

/** The length in seconds of the longest audio track of a WebM/Matroska file; undefined when it is not one or has no audio track. */
export function webmSeconds(bytes: Buffer): number | undefined {
  let scale: number | undefined;
  const tracks = new Map<number, Track>();
  let tracksRead = false;
  const opened = walk(bytes, (element) => {
    if (element.id === ids.info && scale === undefined) {
      for (const field of children(bytes, element)) if (field.id === ids.timecodeScale) scale = unsigned(bytes, field);
      scale ||= 1e6;
    } else if (element.id === ids.tracks && !tracksRead) {
      tracksRead = true;
      for (const entry of children(bytes, element)) {
        const track = entry.id === ids.trackEntry ? readTrack(bytes, entry) : undefined;
        if (track && !tracks.has(track.number)) tracks.set(track.number, track);
      }
    }
  });
  if (!opened || tracks.size === 0) return undefined;
  const measures = measureBlocks(bytes, tracks, scale || 1e6);
  let longest = 0;
  for (const [number, track] of tracks) {
    const measure = measures.get(number);
    if (!measure) continue;
    const untimedEnd = measure.untimedStart === undefined ? 0 : measure.untimedStart + (track.defaultDuration ?? measure.gap ?? 0);
    // The decoder drops the codec delay from the start; every frame but the last (which may be cut short) plays whole.
    longest = Math.max(longest, Math.max(measure.end, untimedEnd) - track.codecDelay, measure.decoded - (track.wholeFrames ? 0 : measure.lastFrame));
  }
  return longest / 1e9;
}

function measureBlocks(bytes: Buffer, tracks: Map<number, Track>, scale: number): Map<number, Measure> {
  const measures = new Map<number, Measure>();
  let clusterTime = 0;
  walk(bytes, (element) => {
    if (element.id === ids.cluster) clusterTime = 0;
    else if (element.id === ids.timecode) clusterTime = unsigned(bytes, element);
    else if (element.id === ids.simpleBlock) addBlock(bytes, element, undefined, 0);
    else if (element.id === ids.blockGroup) {
      let block: Element | undefined;
      let duration: number | undefined;
      let padding = 0;
      for (const field of children(bytes, element)) {
        if (field.id === ids.block) block ??= field;
        else if (field.id === ids.blockDuration) duration = unsigned(bytes, field) * scale;
        else if (field.id === ids.discardPadding) padding = signed(bytes, field);
      }
      if (block) addBlock(bytes, block, duration, padding);
    }
  });
  /** Records a block; DiscardPadding, the nanoseconds the decoder drops from its end, shortens no more than the block. */
  function addBlock(data: Buffer, block: Element, blockDuration: number | undefined, padding: number): void {
    const number = vint(data, block.start, false);
    const end = block.end ?? block.start;
    const track = number && tracks.get(number.value);
    if (!number || !track || block.start + number.length + 3 > end) return;
    const head = block.start + number.length;
    const start = (clusterTime + data.readInt16BE(head)) * scale;
    const frames = blockFrames(data, head + 3, end, (data[head + 2]! >> 1) & 3, track);
    if (!frames) return;
    const measure = measures.get(track.number) ?? { end: 0, decoded: 0, lastFrame: 0 };
    measures.set(track.number, measure);
    if (measure.lastStart !== undefined && start > measure.lastStart) measure.gap = start - measure.lastStart;
    measure.lastStart = start;
    measure.decoded += frames.decoded ?? 0;
    measure.lastFrame = frames.lastFrame ?? 0;
    const own = frames.decoded ?? blockDuration ?? (track.defaultDuration === undefined ? undefined : track.defaultDuration * frames.count);
    if (own === undefined) measure.untimedStart = Math.max(measure.untimedStart ?? start, start);
    else {
      const plays = Math.max(own, blockDuration ?? 0);
      measure.end = Math.max(measure.end, start + plays - Math.min(Math.max(padding, 0), plays));
    }
  }
  return measures;
}

/**
 * The frames of a block's data from `start` to `end` under its lacing (0 none, 1 Xiph, 2 fixed-size, 3 EBML),
 * and the nanoseconds they decode to where the codec says; undefined when the lace sizes do not fit the block,
 * as a demuxer drops such a block.
 */
function blockFrames(bytes: Buffer, start: number, end: number, lacing: number, track: Track): { count: number; decoded?: number; lastFrame?: number } | undefined {
  const frameDuration = track.frameDuration;
  let decoded = frameDuration ? 0 : undefined;
  let lastFrame = decoded;
  const add = (from: number, to: number) => {
    if (!frameDuration) return;
    lastFrame = frameDuration(bytes, from, to);
    decoded! += lastFrame;
  };
  if (lacing === 0) {
    add(start, end);
    return { count: 1, decoded, lastFrame };
  }
  if (start >= end) return undefined;
  const count = bytes[start]! + 1;
  let at = start + 1;
  const sizes: number[] = [];
  if (lacing === 2) {
    if ((end - at) % count !== 0) return undefined;
    for (let i = 0; i < count - 1; i++) sizes.push((end - at) / count);
  } else {
    for (let i = 0; i < count - 1; i++) {
      const size = lacing === 1 ? xiphSize(bytes, at, end) : ebmlLaceSize(bytes, at, end, i === 0 ? undefined : sizes[i - 1]);
      if (!size || size.value < 0) return undefined;
      sizes.push(size.value);
      at += size.length;
    }
  }
  for (const size of sizes) {
    if (at + size > end) return undefined;
    add(at, at + size);
    at += size;
  }
  add(at, end);
  return { count, decoded, lastFrame };
}

function xiphSize(bytes: Buffer, at: number, end: number): { value: number; length: number } | undefined {
  let value = 0;
  for (let length = 1; at + length <= end; length++) {
    const byte = bytes[at + length - 1]!;
    value += byte;
    if (byte < 255) return { value, length };
  }
  return undefined;
}

/** An EBML lace size: the first unsigned, each later one a signed difference from the one before. */
function ebmlLaceSize(bytes: Buffer, at: number, end: number, previous: number | undefined): { value: number; length: number } | undefined {
  const size = at < end ? vint(bytes, at, false) : undefined;
  if (!size || at + size.length > end) return undefined;
  if (previous === undefined) return size;
  return { value: previous + size.value - (2 ** (7 * size.length - 1) - 1), length: size.length };
}
