import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cbrMp3, mp3Seconds, perSecond, recorded, startMediaFixture, tone, xingMp3, type MediaFixture } from "./support/media-fixture.js";

let m: MediaFixture;

beforeAll(async () => {
  m = await startMediaFixture();
});
afterAll(() => m.stop());

const transcribe = (model: string, bytes: Buffer, format: string) =>
  m.gw.call("POST", "/audio/transcriptions", { key: m.key, body: { model, input_audio: { data: bytes.toString("base64"), format } } });
/** Cost of the audio at the test price, as the gateway rounds it (to the millisecond). */
const costOf = (seconds: number) => (Math.ceil(seconds * 1000) * Number(perSecond)) / 1000;

describe("the audio length a transcription is held and charged for", () => {
  it("does not let a WAV header's byte rate shrink the hold below what the provider heard", async () => {
    // Ten seconds at 8 kHz, 16-bit mono, whose header claims nearly 4 GB a second.
    const wav = tone(8000, 10);
    wav.writeUInt32LE(0xfffffff0, 28);
    const res = await transcribe("openai/whisper-1", wav, "wav");
    expect(res.status).toBe(200);
    const usage = res.body.usage as { seconds: number; cost: number };
    // The fake decodes the samples as a provider does and reports 10 seconds.
    expect(usage.seconds).toBe(10);
    expect(usage.cost).toBeCloseTo(costOf(10), 12);
    expect(Number((await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")))).total_cost)).toBeCloseTo(costOf(10), 12);
  });

  it("charges a constant-bitrate MP3 its length from its frames when the provider reports no usage", async () => {
    const mp3 = cbrMp3(10);
    const res = await transcribe("stt/nousage", mp3, "mp3");
    expect(res.status).toBe(200);
    const usage = res.body.usage as { seconds: number; cost: number };
    // 383 frames of 1,152 samples at 44.1 kHz.
    expect(usage.seconds).toBeCloseTo(mp3Seconds(383), 2);
    // To a few milliseconds: the frames' bytes at 128 kbit/s, or the frames a decoder finds.
    expect(usage.cost).toBeCloseTo(costOf(mp3Seconds(383)), 6);
    const generation = await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")));
    expect(Number(generation.total_cost)).toBe(usage.cost);
  });

  it("charges a variable-bitrate MP3 the frames its Xing header counts when the provider reports no usage", async () => {
    const mp3 = xingMp3(12);
    const res = await transcribe("stt/nousage", mp3, "mp3");
    expect(res.status).toBe(200);
    const usage = res.body.usage as { seconds: number; cost: number };
    expect(usage.seconds).toBeCloseTo(mp3Seconds(459), 2);
    expect(usage.cost).toBeCloseTo(costOf(mp3Seconds(459)), 12);
  });

  /** Real encoder output (libs/upstream/src/audio/fixtures) and the seconds ffmpeg plays of each. */
  const encoded = [
    { file: "tone-1.25s-8k.flac", format: "flac", plays: 1.25 },
    { file: "tone-1.25s-8k-opus.ogg", format: "ogg", plays: 1.25 },
    { file: "tone-1.25s-8k-vorbis.ogg", format: "ogg", plays: 1.28 },
    { file: "tone-1.25s-8k.aac", format: "aac", plays: 1.408 },
    { file: "tone-1s.m4a", format: "m4a", plays: 1.064 },
    { file: "tone-1s-fragmented.mp4", format: "mp4", plays: 1.064 },
    { file: "tone-1s-live.webm", format: "webm", plays: 1 },
  ];

  it.each(encoded)("charges $file the seconds a decoder plays when the provider reports no usage", async ({ file, format, plays }) => {
    const bytes = await readFile(join(import.meta.dirname, "../libs/upstream/src/audio/fixtures", file));
    // A second per 1,000 bytes, the bound these were charged at, is two to three times their length.
    expect(bytes.length / 1000).toBeGreaterThan(plays * 1.6);
    const res = await transcribe("stt/nousage", bytes, format);
    expect(res.status).toBe(200);
    const usage = res.body.usage as { seconds: number; cost: number };
    expect(Math.abs(usage.seconds - plays)).toBeLessThan(0.04);
    // Within the millisecond the charge is rounded up to.
    expect(Math.abs(usage.cost - costOf(usage.seconds))).toBeLessThanOrEqual(Number(perSecond) / 1000 + 1e-12);
    expect(Number((await recorded(m.gw, m.key, String(res.headers.get("x-generation-id")))).total_cost)).toBe(usage.cost);
  });
});
