import { deepgram } from "./deepgram.js";
import { googleImages } from "./images-google.js";
import { openAiImages } from "./images-openai.js";
import { openAiSpeech } from "./openai-speech.js";
import { openAiTranscription } from "./openai-transcription.js";
import type { ImageProvider, SpeechProvider, TranscriptionProvider } from "./types.js";

/** Speech-to-text wire formats by the catalog's adapter name. */
export const transcribers: Readonly<Record<string, TranscriptionProvider>> = {
  openai: openAiTranscription,
  "openai-compatible": openAiTranscription,
  deepgram,
};

/** Image generation wire formats by the catalog's adapter name. */
export const imagers: Readonly<Record<string, ImageProvider>> = {
  openai: openAiImages,
  "openai-compatible": openAiImages,
  google: googleImages,
};

/** Text-to-speech wire formats by the catalog's adapter name. */
export const speakers: Readonly<Record<string, SpeechProvider>> = {
  openai: openAiSpeech,
  "openai-compatible": openAiSpeech,
};
