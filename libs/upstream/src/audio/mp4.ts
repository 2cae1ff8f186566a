import { aacFrames, type CodedFrames } from "./codec-frames.js";

/**
 * The playing length of MP4/M4A audio (ISO BMFF), read from the sample tables a demuxer hands to the decoder:
 * per track, the sample durations of `stts` (up to the samples `stsz` lists) plus those of each movie fragment's
 * `trun` (else the `tfhd`, else the `trex` default), over the `mdhd` timescale.
 *
 * The `mvhd`/`mdhd`/`mehd` durations and edit lists are summaries the client writes; they are not read. They
 * could only lower the length below the samples the decoder gets, or raise it to audio that is not in the
 * file. Sample durations are client-written too, so for AAC the length is also never less than the
 * samples the decoder decodes: every listed access unit but the last (which may be partial) is a whole frame
 * at the rate of the AudioSpecificConfig the decoder is set up with. For Opus that bound is only its shortest
 * packet, 2.5 ms a sample.
 */

interface Box {
  type: string;
  /** Where the payload starts. */
  start: number;
  /** Where the box ends, never past its parent. */
  end: number;
}

/** The boxes from `from` to `to`; a box claiming more bytes than there are ends at `to`. Stops at a header that cannot be read. */
function* boxes(bytes: Buffer, from: number, to: number): Generator<Box> {
  for (let offset = from; offset + 8 <= to; ) {
    let size = bytes.readUInt32BE(offset);
    let header = 8;
    if (size === 1) {
      if (offset + 16 > to) return;
      size = bytes.readUInt32BE(offset + 8) * 2 ** 32 + bytes.readUInt32BE(offset + 12);
      header = 16;
    } else if (size === 0) {
      size = to - offset;
    }
    if (size < header) return;
    yield { type: bytes.toString("latin1", offset + 4, offset + 8), start: offset + header, end: Math.min(offset + size, to) };
    offset += size;
  }
}

const child = (bytes: Buffer, parent: Box, type: string): Box | undefined => {
  for (const box of boxes(bytes, parent.start, parent.end)) if (box.type === type) return box;
  return undefined;
};

/** A 32-bit field at `offset` inside `box`, or undefined when the box is too short to hold it. */
const field = (bytes: Buffer, box: Box, offset: number): number | undefined =>
  box.start + offset + 4 <= box.end ? bytes.readUInt32BE(box.start + offset) : undefined;

interface Track {
  id: number;
  sound: boolean;
  timescale: number;
  /** Samples the moov's sample table lists, and the sum of their durations in timescale units. */
  samples: number;
  ticks: number;
  /** The fewest seconds a sample decodes to, as samples at a rate, where the codec says. */
  frames?: CodedFrames;
}

interface Run {
  trackId: number;
  samples: number;
  /** The sum of the per-sample durations the run gives, and the count of samples that take a default. */
  ticks: number;
  untimed: number;
  fragmentDefault?: number;
}

interface Movie {
  tracks: Track[];
  /** `trex` default sample durations by track ID. */
  defaults: Map<number, number>;
  runs: Run[];
}

/** The length in seconds of the MP4's longest audio track; undefined when the bytes are not MP4 or hold no readable audio track. */
export function mp4Seconds(bytes: Buffer): number | undefined {
  if (bytes.length < 8 || bytes.toString("latin1", 4, 8) !== "ftyp") return undefined;
  const movie: Movie = { tracks: [], defaults: new Map(), runs: [] };
  for (const box of boxes(bytes, 0, bytes.length)) {
    if (box.type === "moov") readMovie(bytes, box, movie);
    else if (box.type === "moof") readFragment(bytes, box, movie.runs);
  }
  const fragments = fragmentTotals(movie);
  let longest: number | undefined;
  for (const track of movie.tracks) {
    if (!track.sound) continue;
    const seconds = trackSeconds(track, fragments.get(track.id));
    if (seconds !== undefined) longest = Math.max(longest ?? 0, seconds);
  }
  return longest;
}

/** The samples and durations the movie fragments add, by track ID. */
function fragmentTotals(movie: Movie): Map<number, { samples: number; ticks: number }> {
  const totals = new Map<number, { samples: number; ticks: number }>();
  for (const run of movie.runs) {
    const total = totals.get(run.trackId) ?? { samples: 0, ticks: 0 };
    total.samples += run.samples;
    total.ticks += run.ticks + run.untimed * (run.fragmentDefault ?? movie.defaults.get(run.trackId) ?? 0);
    totals.set(run.trackId, total);
  }
  return totals;
}

/** Every audio track is measured (the longest counts) so the choice of track a server decodes cannot shorten the bill. */
function trackSeconds(track: Track, fragments = { samples: 0, ticks: 0 }): number | undefined {
  const samples = track.samples + fragments.samples;
  const ticks = track.ticks + fragments.ticks;
  const timed = track.timescale > 0 ? ticks / track.timescale : undefined;
  const decoded = track.frames ? (Math.max(0, samples - 1) * track.frames.frameSamples) / track.frames.sampleRate : undefined;
  if (timed === undefined) return decoded;
  return Math.max(timed, decoded ?? 0);
}

function readMovie(bytes: Buffer, moov: Box, movie: Movie): void {
  for (const box of boxes(bytes, moov.start, moov.end)) {
    if (box.type === "trak") {
      const track = readTrack(bytes, box);
      if (track) movie.tracks.push(track);
    } else if (box.type === "mvex") {
      for (const trex of boxes(bytes, box.start, box.end)) {
        const id = field(bytes, trex, 4);
        const duration = field(bytes, trex, 12);
        if (trex.type === "trex" && id !== undefined && duration !== undefined && !movie.defaults.has(id)) movie.defaults.set(id, duration);
      }
    }
  }
}

function readTrack(bytes: Buffer, trak: Box): Track | undefined {
  const tkhd = child(bytes, trak, "tkhd");
  const mdia = child(bytes, trak, "mdia");
  if (!tkhd || !mdia) return undefined;
  const id = field(bytes, tkhd, bytes[tkhd.start] === 1 ? 20 : 12);
  const hdlr = child(bytes, mdia, "hdlr");
  const mdhd = child(bytes, mdia, "mdhd");
  if (id === undefined || !hdlr || !mdhd || hdlr.start + 12 > hdlr.end) return undefined;
  const sound = bytes.toString("latin1", hdlr.start + 8, hdlr.start + 12) === "soun";
  const timescale = field(bytes, mdhd, bytes[mdhd.start] === 1 ? 20 : 12) ?? 0;
  const minf = child(bytes, mdia, "minf");
  const stbl = minf && child(bytes, minf, "stbl");
  const track: Track = { id, sound, timescale, samples: 0, ticks: 0 };
  if (sound && stbl) readSampleTable(bytes, stbl, track);
  return track;
}

function readSampleTable(bytes: Buffer, stbl: Box, track: Track): void {
  let stts: Box | undefined;
  for (const box of boxes(bytes, stbl.start, stbl.end)) {
    if (box.type === "stts") stts = box;
    else if (box.type === "stsz" || box.type === "stz2") track.samples = field(bytes, box, 8) ?? 0;
    else if (box.type === "stsd") track.frames = firstEntryFrames(bytes, box);
  }
  if (stts) track.ticks = listedTicks(bytes, stts, track.samples);
}

/**
 * The durations `stts` gives the first `samples` samples; samples it does not reach take its last duration.
 * Entries past the end of the box are not read.
 */
function listedTicks(bytes: Buffer, stts: Box, samples: number): number {
  const entries = field(bytes, stts, 4) ?? 0;
  let remaining = samples;
  let ticks = 0;
  let delta = 0;
  for (let i = 0, at = stts.start + 8; i < entries && at + 8 <= stts.end && remaining > 0; i++, at += 8) {
    const count = Math.min(bytes.readUInt32BE(at), remaining);
    delta = bytes.readUInt32BE(at + 4);
    ticks += count * delta;
    remaining -= count;
  }
  return ticks + remaining * delta;
}

/**
 * What a sample of the first sample entry decodes to at the least: an AAC frame for `mp4a` with an MPEG-4 or
 * MPEG-2 AAC decoder config; for `Opus`, 2.5 ms, its shortest packet (the TOC bytes are in the media data).
 */
function firstEntryFrames(bytes: Buffer, stsd: Box): CodedFrames | undefined {
  const entry = boxes(bytes, stsd.start + 8, stsd.end).next().value;
  if (entry?.type === "Opus") return { sampleRate: 48_000, frameSamples: 120 };
  if (!entry || entry.type !== "mp4a" || entry.start + 28 > entry.end) return undefined;
  // QuickTime sound descriptions of version 1 and 2 carry 16 and 36 more bytes before their boxes.
  const version = bytes.readUInt16BE(entry.start + 8);
  const inner: Box = { type: "mp4a", start: entry.start + 28 + (version === 1 ? 16 : version === 2 ? 36 : 0), end: entry.end };
  const wave = child(bytes, inner, "wave");
  const esds = child(bytes, inner, "esds") ?? (wave && child(bytes, wave, "esds"));
  return esds && esdsAac(bytes, esds.start + 4, esds.end);
}

interface Descriptor {
  tag: number;
  start: number;
  end: number;
}

/** The MPEG-4 descriptor at `offset`: a tag, a size of up to four 7-bit bytes, then its body. */
function descriptorAt(bytes: Buffer, offset: number, end: number): Descriptor | undefined {
  if (offset >= end) return undefined;
  let size = 0;
  let at = offset + 1;
  for (let n = 0; ; n++) {
    if (n === 4 || at >= end) return undefined;
    const byte = bytes[at++]!;
    size = size * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) break;
  }
  return { tag: bytes[offset]!, start: at, end: Math.min(at + size, end) };
}

function findDescriptor(bytes: Buffer, from: number, end: number, tag: number): Descriptor | undefined {
  for (let found = descriptorAt(bytes, from, end); found; found = descriptorAt(bytes, found.end, end)) {
    if (found.tag === tag) return found;
  }
  return undefined;
}

/** AAC object types in a DecoderConfigDescriptor: MPEG-4 audio, and MPEG-2 AAC main, LC and SSR. */
const aacObjectTypes = [0x40, 0x66, 0x67, 0x68];

/** The AudioSpecificConfig of an `esds` body: ES_Descriptor, its DecoderConfigDescriptor, then its DecoderSpecificInfo. */
function esdsAac(bytes: Buffer, start: number, end: number): CodedFrames | undefined {
  const es = findDescriptor(bytes, start, end, 3);
  if (!es || es.start + 3 > es.end) return undefined;
  const flags = bytes[es.start + 2]!;
  let at = es.start + 3 + (flags & 0x80 ? 2 : 0);
  if (flags & 0x40) at += 1 + (bytes[at] ?? 0);
  if (flags & 0x20) at += 2;
  const config = findDescriptor(bytes, at, es.end, 4);
  if (!config || config.start + 13 > config.end || !aacObjectTypes.includes(bytes[config.start]!)) return undefined;
  const specific = findDescriptor(bytes, config.start + 13, config.end, 5);
  return specific && aacFrames(bytes, specific.start, specific.end);
}

function readFragment(bytes: Buffer, moof: Box, runs: Run[]): void {
  for (const traf of boxes(bytes, moof.start, moof.end)) {
    if (traf.type !== "traf") continue;
    let trackId: number | undefined;
    let fragmentDefault: number | undefined;
    for (const box of boxes(bytes, traf.start, traf.end)) {
      if (box.type === "tfhd") {
        const flags = (field(bytes, box, 0) ?? 0) & 0xffffff;
        trackId = field(bytes, box, 4);
        const at = 8 + (flags & 0x01 ? 8 : 0) + (flags & 0x02 ? 4 : 0);
        fragmentDefault = flags & 0x08 ? field(bytes, box, at) : undefined;
      } else if (box.type === "trun" && trackId !== undefined) {
        runs.push({ trackId, fragmentDefault, ...runDurations(bytes, box) });
      }
    }
  }
}

/** A `trun`'s samples and their durations; with per-sample fields, only the entries inside the box count. */
function runDurations(bytes: Buffer, trun: Box): Pick<Run, "samples" | "ticks" | "untimed"> {
  const flags = (field(bytes, trun, 0) ?? 0) & 0xffffff;
  const count = field(bytes, trun, 4) ?? 0;
  const first = trun.start + 8 + (flags & 0x01 ? 4 : 0) + (flags & 0x04 ? 4 : 0);
  const entrySize = 4 * [0x100, 0x200, 0x400, 0x800].filter((bit) => flags & bit).length;
  if (entrySize === 0) return { samples: count, ticks: 0, untimed: count };
  const samples = Math.min(count, Math.max(0, Math.floor((trun.end - first) / entrySize)));
  if (!(flags & 0x100)) return { samples, ticks: 0, untimed: samples };
  let ticks = 0;
  for (let i = 0, at = first; i < samples; i++, at += entrySize) ticks += bytes.readUInt32BE(at);
  return { samples, ticks, untimed: 0 };
}
