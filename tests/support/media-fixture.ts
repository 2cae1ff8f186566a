import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { catalogEnv } from "./catalog-fixture.js";
import { eventually } from "./eventually.js";
import { startFakeMediaProvider, type FakeMediaProvider } from "./fake-media.js";
import { startFakeSpeechProvider, type FakeSpeechProvider } from "./fake-speech.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { pcmWav } from "./wav.js";

/** Prices a test can check exactly: $0.0001 per second of audio, $0.04 per image, $0.000015 per character spoken. */
export const perSecond = "0.0001";
export const perImage = "0.04";
export const perCharacter = "0.000015";
/** Token-priced images: prompt and completion tokens, no per-image price. */
export const imageTokenPricing = { prompt: "0.0000003", completion: "0.00003" };
/** Token-priced speech: text input tokens and audio output tokens. */
export const speechTokenPricing = { prompt: "0.0000006", completion: "0", audio_output: "0.000012" };

const stt = (id: string, endpoints: Array<[string, string]>, pricing: Record<string, string> = { prompt: "0", completion: "0", audio_second: perSecond }) => ({
  id,
  name: id,
  context_length: 1,
  input_modalities: ["audio"],
  output_modalities: ["transcription"],
  endpoints: endpoints.map(([provider, upstream]) => ({ provider, upstream_model: upstream, pricing })),
});

const images = (id: string, endpoints: Array<[string, string]>, pricing: Record<string, string> = { prompt: "0", completion: "0", image_output: perImage }) => ({
  id,
  name: id,
  context_length: 32000,
  input_modalities: ["text", "image"],
  output_modalities: ["image"],
  endpoints: endpoints.map(([provider, upstream]) => ({ provider, upstream_model: upstream, pricing })),
});

const tts = (id: string, endpoints: Array<[string, string]>, pricing: Record<string, string> = { prompt: "0", completion: "0", character: perCharacter }, supported: string[] = []) => ({
  id,
  name: id,
  context_length: 2000,
  input_modalities: ["text"],
  output_modalities: ["speech"],
  endpoints: endpoints.map(([provider, upstream]) => ({ provider, upstream_model: upstream, pricing, supported_parameters: supported })),
});

export interface MediaFixture {
  gw: TestGateway;
  fake: FakeMediaProvider;
  /** The speech server behind `voices` (OpenAI) and `voices-compat` (OpenAI-compatible). */
  speech: FakeSpeechProvider;
  /** An inference key without a limit. */
  key: string;
  stop(): Promise<void>;
}

/**
 * The gateway with one fake media provider behind four catalog providers, one per wire format: `whisper`
 * and `pixels` (OpenAI), `dg` (Deepgram), `gem` (Gemini); and a fake speech server behind `voices` and
 * `voices-compat`. The upstream model name picks a fake's behaviour; `stt/pair`, `img/pair` and
 * `tts/pair` have two endpoints that both answer.
 */
export async function startMediaFixture(env: Record<string, string> = {}): Promise<MediaFixture> {
  const fake = await startFakeMediaProvider();
  const speech = await startFakeSpeechProvider();
  const provider = (slug: string, adapter: string, baseUrl = fake.baseUrl) => ({ slug, name: slug, adapter, base_url: baseUrl, api_key_env: `${slug.toUpperCase().replace("-", "_")}_KEY` });
  const catalog = {
    providers: [
      provider("whisper", "openai"),
      provider("dg", "deepgram"),
      provider("pixels", "openai"),
      provider("gem", "google"),
      provider("voices", "openai", speech.baseUrl),
      provider("voices-compat", "openai-compatible", speech.baseUrl),
    ],
    models: [
      stt("openai/whisper-1", [["whisper", "ok"]]),
      stt("stt/deepgram", [["dg", "ok"]]),
      stt("stt/fallback", [["whisper", "fail-500"], ["dg", "ok"]]),
      stt("stt/nousage", [["whisper", "no-usage"]]),
      stt("stt/limited", [["whisper", "rate-limited"]]),
      stt("stt/bad", [["whisper", "bad-request"]]),
      stt("stt/overloaded", [["whisper", "overloaded"]]),
      stt("stt/stall", [["whisper", "stall"]]),
      stt("stt/failing", [["whisper", "fail-500"]]),
      stt("stt/pair", [["whisper", "ok"], ["dg", "ok"]]),
      stt("stt/tokens", [["whisper", "tokens"]], { prompt: "0.0000025", completion: "0.00001", audio: "0.000006" }),
      images("openai/gpt-image-1", [["pixels", "ok"]]),
      images("google/gemini-image", [["gem", "ok"]], { prompt: "0.0000003", completion: "0.00003" }),
      images("img/fallback", [["pixels", "fail-500"], ["gem", "ok"]]),
      images("img/limited", [["pixels", "rate-limited"]]),
      images("img/cut", [["pixels", "cut"]]),
      images("img/nousage", [["pixels", "no-usage"]]),
      images("img/vector", [["pixels", "svg"]]),
      images("img/url-only", [["pixels", "url-only"]]),
      images("img/blocked", [["gem", "blocked"]]),
      images("img/pair", [["pixels", "ok"], ["gem", "ok"]]),
      images("img/stall", [["pixels", "stall"]]),
      images("img/partial-stall", [["pixels", "partial-stall"]]),
      images("img/extra", [["pixels", "extra"]]),
      images("img/gem-extra", [["gem", "extra"]]),
      images("img/tokens-nousage", [["pixels", "no-usage"]], imageTokenPricing),
      tts("openai/tts-1", [["voices", "ok"]], undefined, ["speed"]),
      tts("openai/gpt-4o-mini-tts", [["voices", "tokens"]], speechTokenPricing, ["instructions"]),
      tts("tts/no-usage", [["voices", "no-usage"]], speechTokenPricing),
      tts("tts/fallback", [["voices", "fail-500"], ["voices-compat", "ok"]]),
      tts("tts/gated", [["voices", "gated"]]),
      tts("tts/cut", [["voices", "cut"]]),
      tts("tts/pair", [["voices", "ok"], ["voices-compat", "ok"]]),
      tts("tts/failing", [["voices", "fail-500"]]),
      // The media fake speaks OpenAI's speech wire too: its `stall` answers nothing, not even headers.
      tts("tts/stall", [["whisper", "stall"]]),
      { id: "vendor/chat", name: "Chat", context_length: 8000, endpoints: [{ provider: "whisper", upstream_model: "ok", pricing: { prompt: "0", completion: "0" } }] },
    ],
  };
  const keys = { WHISPER_KEY: "sk-whisper", DG_KEY: "dg-secret", PIXELS_KEY: "sk-pixels", GEM_KEY: "gem-secret", VOICES_KEY: "sk-voices", VOICES_COMPAT_KEY: "sk-compat" };
  const gw = await startTestGateway({ ...(await catalogEnv(catalog)), ...keys, MEDIA_TIMEOUT_MS: "2000", MAX_AUDIO_BYTES: "400000", ...env });
  const key = String((await gw.call("POST", "/keys", { body: { name: "media" } })).body.key);
  return {
    gw,
    fake,
    speech,
    key,
    async stop() {
      await gw.stop();
      await fake.stop();
      await speech.stop();
    },
  };
}

/** Saves a preset from chat request fields (no system prompt) with the management key; its id. */
export async function savePreset(gw: TestGateway, slug: string, config: Record<string, unknown>): Promise<string> {
  const saved = await gw.call("POST", `/presets/${slug}/chat/completions`, { body: { messages: [], ...config } });
  if (saved.status !== 200) throw new Error(`preset ${slug} not saved: ${JSON.stringify(saved.body)}`);
  return String((await gw.call("GET", `/presets/${slug}`)).body.data?.id);
}

/** The generation as `GET /generation` shows it to `key`, once it is recorded. */
export async function recorded(gw: TestGateway, key: string, id: string): Promise<Record<string, unknown>> {
  const read = () => gw.call("GET", `/generation?id=${id}`, { key });
  await eventually(async () => (await read()).status === 200, 5000);
  return (await read()).body.data!;
}

/**
 * Real speech: espeak-ng writes a WAV of the text (16-bit mono, 22,050 Hz); `.ci/run` installs it. Where it
 * is missing (a fresh laptop running `npm test`), a spoken-length tone in the same format stands in.
 */
export async function speak(text: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), "switchyard-audio-"));
  const file = join(dir, "speech.wav");
  try {
    await promisify(execFile)("espeak-ng", ["-w", file, text]);
    return await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    return tone(22_050, 0.08 * text.length);
  }
}

/** A 440 Hz tone as a 16-bit mono PCM WAV. */
export const tone = (rate: number, seconds: number): Buffer =>
  pcmWav(rate, Math.round(rate * seconds), { sample: (i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)) });

/** Silent 8-bit mono PCM WAV at 8 kHz: 8,000 bytes a second. */
export const silentWav = (seconds: number): Buffer => pcmWav(8000, seconds * 8000, { bits: 8 });

/** A WAV header's length in seconds. */
export const wavDuration = (wav: Buffer) => (wav.length - 44) / wav.readUInt32LE(28);

/** MPEG-1 Layer III frame headers (stereo, 44.1 kHz, no CRC) by bitrate in kbit/s: its byte 2's bitrate index. */
const mp3BitrateIndex: Record<number, number> = { 32: 1, 64: 5, 128: 9, 192: 11, 320: 14 };

/** One silent MPEG-1 Layer III frame at 44.1 kHz: a 4-byte header, then zeros to the frame's length. */
function mp3Frame(kbps: number, padding: boolean): Buffer {
  const frame = Buffer.alloc(Math.floor((144 * kbps * 1000) / 44_100) + (padding ? 1 : 0));
  frame.set([0xff, 0xfb, (mp3BitrateIndex[kbps]! << 4) | (padding ? 0x02 : 0), 0x00]);
  return frame;
}

/** An ID3v2 tag of `size` bytes after its header, as encoders put before the first frame. */
function id3Tag(size: number): Buffer {
  const tag = Buffer.alloc(10 + size);
  tag.write("ID3", 0, "latin1");
  tag.set([4, 0, 0, (size >> 21) & 0x7f, (size >> 14) & 0x7f, (size >> 7) & 0x7f, size & 0x7f], 3);
  return tag;
}

/** 1,152 samples a frame at 44.1 kHz. */
const mp3FrameSeconds = 1152 / 44_100;

/** Constant-bitrate MP3 of about `seconds`, behind an ID3 tag, padded as an encoder pads to keep the rate exact. */
export function cbrMp3(seconds: number, kbps = 128): Buffer {
  const frames = Math.round(seconds / mp3FrameSeconds);
  const exact = (144 * kbps * 1000) / 44_100;
  return Buffer.concat([id3Tag(100), ...Array.from({ length: frames }, (_, i) => mp3Frame(kbps, Math.floor((i + 1) * exact) - Math.floor(i * exact) > Math.floor(exact)))]);
}

/**
 * Variable-bitrate MP3 of about `seconds`: a Xing header frame that counts the audio frames, then frames
 * alternating between 32 and 192 kbit/s.
 */
export function xingMp3(seconds: number): Buffer {
  const frames = Math.round(seconds / mp3FrameSeconds);
  const xing = mp3Frame(128, false);
  // After the header and 32 bytes of stereo side information.
  xing.write("Xing", 36, "latin1");
  xing.writeUInt32BE(1, 40);
  xing.writeUInt32BE(frames, 44);
  return Buffer.concat([xing, ...Array.from({ length: frames }, (_, i) => mp3Frame(i % 2 ? 192 : 32, false))]);
}

/** The length of `frames` MP3 frames at 44.1 kHz. */
export const mp3Seconds = (frames: number) => frames * mp3FrameSeconds;
