import { FormData, post, readAnswer, UpstreamError } from "@switchyard/upstream";
import { z } from "zod";
import type { TranscriptionCall, TranscriptionProvider, TranscriptSegment, TranscriptWord, UpstreamTarget, UpstreamTranscription } from "./types.js";

/**
 * OpenAI and whisper.cpp answer `verbose_json` with the language's English name (as openai/whisper
 * prints it), while callers were promised ISO-639-1. Whisper's own list, plus the aliases it accepts.
 */
const languageCodes = new Map(
  (
    "afrikaans=af,albanian=sq,amharic=am,arabic=ar,armenian=hy,assamese=as,azerbaijani=az,bashkir=ba,basque=eu,belarusian=be," +
    "bengali=bn,bosnian=bs,breton=br,bulgarian=bg,burmese=my,myanmar=my,cantonese=zh,castilian=es,catalan=ca,valencian=ca," +
    "chinese=zh,mandarin=zh,croatian=hr,czech=cs,danish=da,dutch=nl,flemish=nl,english=en,estonian=et,faroese=fo,finnish=fi," +
    "french=fr,galician=gl,georgian=ka,german=de,greek=el,gujarati=gu,haitian=ht,haitian creole=ht,hausa=ha,hebrew=he,hindi=hi," +
    "hungarian=hu,icelandic=is,indonesian=id,italian=it,japanese=ja,javanese=jv,kannada=kn,kazakh=kk,khmer=km,korean=ko,lao=lo," +
    "latin=la,latvian=lv,lingala=ln,lithuanian=lt,luxembourgish=lb,letzeburgesch=lb,macedonian=mk,malagasy=mg,malay=ms," +
    "malayalam=ml,maltese=mt,maori=mi,marathi=mr,moldavian=ro,moldovan=ro,mongolian=mn,nepali=ne,norwegian=no,nynorsk=nn," +
    "occitan=oc,panjabi=pa,punjabi=pa,pashto=ps,pushto=ps,persian=fa,polish=pl,portuguese=pt,romanian=ro,russian=ru,sanskrit=sa," +
    "serbian=sr,shona=sn,sindhi=sd,sinhala=si,sinhalese=si,slovak=sk,slovenian=sl,somali=so,spanish=es,sundanese=su,swahili=sw," +
    "swedish=sv,tagalog=tl,tajik=tg,tamil=ta,tatar=tt,telugu=te,thai=th,tibetan=bo,turkish=tr,turkmen=tk,ukrainian=uk,urdu=ur," +
    "uzbek=uz,vietnamese=vi,welsh=cy,yiddish=yi,yoruba=yo"
  )
    .split(",")
    .map((pair) => pair.split("=") as [string, string]),
);

/** An ISO-639-1 code for a language name; what cannot be mapped is passed on as the upstream said it. */
export function languageCode(language: string): string {
  const key = language.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(key)) return key;
  return languageCodes.get(key) ?? language;
}

/** whisper.cpp and some Python servers send `duration` as a numeric string. */
const seconds = z.union([z.number().nonnegative(), z.string().regex(/^\s*\d+(?:\.\d+)?\s*$/).transform(Number)]);

const segment = z.looseObject({
  id: z.number().int().nullish(),
  start: z.number(),
  end: z.number(),
  text: z.string(),
});

/** Fields of openai/whisper's segments that callers of `verbose_json` may rely on; anything else a server adds stays behind. */
const segmentExtras = ["seek", "tokens", "temperature", "avg_logprob", "compression_ratio", "no_speech_prob"] as const;

const word = z.looseObject({ word: z.string(), start: z.number(), end: z.number() });

const durationUsage = z.looseObject({ type: z.literal("duration"), seconds });
const tokenUsage = z.looseObject({
  type: z.literal("tokens"),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative().nullish(),
});

const answer = z.looseObject({
  text: z.string(),
  language: z.string().nullish(),
  duration: seconds.nullish(),
  segments: z.array(segment).nullish(),
  words: z.array(word).nullish(),
  // An unfamiliar usage shape must not lose a good transcript; the route then estimates and says so.
  usage: z.union([durationUsage, tokenUsage]).nullish().catch(undefined),
});

/** Scalars as their text, objects and arrays as JSON: a form field holds only text. */
const fieldValue = (value: unknown): string => (typeof value === "object" ? JSON.stringify(value) : String(value));

function form(call: TranscriptionCall, target: UpstreamTarget): FormData {
  const body = new FormData();
  body.append("file", new Blob([call.audio.bytes], { type: call.audio.mediaType }), call.audio.filename);
  body.append("model", target.upstreamModel);
  if (call.language !== undefined) body.append("language", call.language);
  if (call.prompt !== undefined) body.append("prompt", call.prompt);
  if (call.temperature !== undefined) body.append("temperature", String(call.temperature));
  body.append("response_format", call.verbose ? "verbose_json" : "json");
  if (call.verbose) {
    for (const granularity of call.granularities.length > 0 ? call.granularities : ["segment"]) body.append("timestamp_granularities[]", granularity);
  }
  // Options add fields; they never replace what the request itself decided (model, format, language...).
  for (const [key, value] of Object.entries(call.options)) {
    if (value === undefined || value === null || body.has(key)) continue;
    body.append(key, fieldValue(value));
  }
  return body;
}

function toSegment(s: z.infer<typeof segment>, index: number): TranscriptSegment {
  const out: TranscriptSegment = { id: s.id ?? index, start: s.start, end: s.end, text: s.text };
  for (const key of segmentExtras) if (s[key] !== undefined && s[key] !== null) out[key] = s[key];
  return out;
}

function toUsage(a: z.infer<typeof answer>): UpstreamTranscription["usage"] {
  if (a.usage?.type === "duration") return { seconds: a.usage.seconds };
  if (a.usage?.type === "tokens") return { inputTokens: a.usage.input_tokens, outputTokens: a.usage.output_tokens };
  return { seconds: a.duration ?? undefined };
}

/**
 * OpenAI's `/audio/transcriptions` multipart upload, also spoken by whisper.cpp's server,
 * faster-whisper servers, LocalAI and Groq.
 */
export const openAiTranscription: TranscriptionProvider = {
  verbose: true,
  prompts: true,
  temperature: true,
  async transcribe(call, target, signal) {
    const res = await post(
      target.provider,
      `${target.baseUrl.replace(/\/$/, "")}/audio/transcriptions`,
      target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
      form(call, target),
      signal,
    );
    const parsed = answer.safeParse(await readAnswer(target.provider, res, signal));
    if (!parsed.success) throw new UpstreamError(`${target.provider} sent a response that is not a transcription`, 502, true);
    const a = parsed.data;
    return {
      text: a.text,
      language: a.language ? languageCode(a.language) : undefined,
      duration: a.duration ?? undefined,
      segments: a.segments?.map(toSegment),
      words: a.words?.map((w): TranscriptWord => ({ word: w.word, start: w.start, end: w.end })),
      usage: toUsage(a),
    };
  },
};
