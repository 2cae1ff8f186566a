import type { z } from "zod";
import { chatCompletionRequest } from "./chat-request.js";
import { chatCompletion, chatCompletionChunk } from "./chat-response.js";
import { completionsRequest, textCompletion, textCompletionChunk } from "./completions.js";
import { messageObject, messagesCountTokensRequest, messagesRequest, messagesTokenCount } from "./messages.js";
import { responseObject } from "./responses-output.js";
import { responsesRequest } from "./responses.js";
import { generationContentQuery, generationContentResponse, generationQuery, generationResponse } from "./generation.js";
import { embeddingsRequest, embeddingsResponse, rerankRequest, rerankResponse } from "./embeddings.js";
import { imageGenerationRequest, imageGenerationResponse, imageStreamEvent } from "./images.js";
import { defineRoute, type RouteContract } from "./route.js";
import { speechRequest } from "./speech.js";
import { transcriptionMultipartBody, transcriptionRequest, transcriptionResponse } from "./transcription.js";

const providerErrors = [400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 524, 529] as const;

export const inferenceRoutes = [
  defineRoute({
    operationId: "sendChatCompletionRequest",
    method: "post",
    path: "/chat/completions",
    summary:
      "Create a chat completion; with stream true the 200 is text/event-stream of chat.completion.chunk frames",
    tag: "Chat",
    auth: "inference",
    body: chatCompletionRequest,
    responses: { 200: chatCompletion },
    errors: [400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 524, 529],
  }),
  defineRoute({
    operationId: "createResponses",
    method: "post",
    path: "/responses",
    summary:
      "Create a response (OpenAI Responses API); with stream true the 200 is text/event-stream of response.* events with sequence numbers",
    tag: "Responses",
    auth: "inference",
    body: responsesRequest,
    responses: { 200: responseObject },
    errors: [400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 524, 529],
  }),
  defineRoute({
    operationId: "createCompletions",
    method: "post",
    path: "/completions",
    summary: "Create a legacy text completion; with stream true the 200 is text/event-stream of text_completion frames",
    tag: "Completions",
    auth: "inference",
    body: completionsRequest,
    responses: { 200: textCompletion },
    errors: [400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 524, 529],
  }),
  defineRoute({
    operationId: "createMessages",
    method: "post",
    path: "/messages",
    summary:
      "Create a message (Anthropic Messages API, for Claude Code and the Anthropic SDK; the key may come in x-api-key); with stream true the 200 is text/event-stream of Anthropic's message events",
    tag: "Messages",
    auth: "inference",
    body: messagesRequest,
    responses: { 200: messageObject },
    errors: [400, 401, 402, 403, 404, 413, 429, 500, 502, 503, 524, 529],
    errorShape: "anthropic",
  }),
  defineRoute({
    operationId: "countMessagesTokens",
    method: "post",
    path: "/messages/count_tokens",
    summary: "Count a Messages request's input tokens: Anthropic endpoints count them; elsewhere an estimate that says so",
    tag: "Messages",
    auth: "inference",
    body: messagesCountTokensRequest,
    responses: { 200: messagesTokenCount },
    errors: [400, 401, 403, 404, 429, 500, 502, 503],
    errorShape: "anthropic",
  }),
  defineRoute({
    operationId: "createEmbeddings",
    method: "post",
    path: "/embeddings",
    summary: "Embed text, token ids or multimodal items; vectors as floats or base64, limits from the endpoint's catalog entry",
    tag: "Embeddings",
    auth: "inference",
    body: embeddingsRequest,
    responses: { 200: embeddingsResponse },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "createRerank",
    method: "post",
    path: "/rerank",
    summary: "Rank documents by relevance to a query, best first",
    tag: "Rerank",
    auth: "inference",
    body: rerankRequest,
    responses: { 200: rerankResponse },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "createAudioTranscriptions",
    method: "post",
    path: "/audio/transcriptions",
    summary: "Transcribe audio: JSON with base64 audio, or an OpenAI-style multipart file upload",
    tag: "Transcriptions",
    auth: "inference",
    body: transcriptionRequest,
    responses: { 200: transcriptionResponse },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "createImages",
    method: "post",
    path: "/images",
    summary: "Generate images; with stream true partial images arrive as SSE events",
    tag: "Images",
    auth: "inference",
    body: imageGenerationRequest,
    responses: { 200: imageGenerationResponse },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "createImageGenerations",
    method: "post",
    path: "/images/generations",
    summary: "The same operation as POST /images, where the openai SDK's images.generate posts",
    tag: "Images",
    auth: "inference",
    body: imageGenerationRequest,
    responses: { 200: imageGenerationResponse },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "createAudioSpeech",
    method: "post",
    path: "/audio/speech",
    summary: "Speak text: the 200 is the audio itself (audio/mpeg, audio/pcm... by response_format), streamed as the provider makes it",
    tag: "Speech",
    auth: "inference",
    body: speechRequest,
    responses: { 200: null },
    errors: providerErrors,
  }),
  defineRoute({
    operationId: "getGeneration",
    method: "get",
    path: "/generation",
    summary: "Get a generation's metadata, usage and cost by id",
    tag: "Generations",
    auth: "any",
    query: generationQuery,
    responses: { 200: generationResponse },
    errors: [400, 401, 404, 429, 500],
  }),
  defineRoute({
    operationId: "listGenerationContent",
    method: "get",
    path: "/generation/content",
    summary: "What input/output logging kept of a generation: the messages it was sent, its answer, its error",
    tag: "Generations",
    auth: "any",
    query: generationContentQuery,
    responses: { 200: generationContentResponse },
    errors: [400, 401, 404, 429, 500],
  }),
] as const satisfies readonly RouteContract[];

/** Request bodies an operation accepts besides its contract's `body`, for the OpenAPI document. */
export const alternateRequestBodies: Readonly<Record<string, { mediaType: string; schema: z.ZodType }>> = {
  createAudioTranscriptions: { mediaType: "multipart/form-data", schema: transcriptionMultipartBody },
};

/** SSE frame schemas of the operations that stream when the body says `stream: true`. */
export const streamingResponses: Readonly<Record<string, z.ZodType>> = {
  sendChatCompletionRequest: chatCompletionChunk,
  createCompletions: textCompletionChunk,
  createImages: imageStreamEvent,
  createImageGenerations: imageStreamEvent,
};
