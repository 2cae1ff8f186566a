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
});
