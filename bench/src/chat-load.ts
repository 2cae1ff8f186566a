import type { Pool } from "undici";
import { conversation } from "./conversation.js";
import { embeddingInputs } from "./embedding-inputs.js";
import { apiNames, streams, type Dialect, type PromptSize } from "./plans.js";

/** Where a target takes one dialect's requests, and the model they name. */
export interface DialectRoute {
  path: string;
  model: string;
}

/** Where and how a target takes a chat completion (and the other dialects it serves). */
export interface ChatEndpoint {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  headers: Record<string, string>;
  /** Chat completions' route, and each other dialect's where the target serves it. */
  routes: { chat: DialectRoute } & Partial<Record<Dialect, DialectRoute>>;
}

/**
 * One kind of request to one endpoint: its path, headers and body, made once so the load generator's own work
 * stays out of the figures. The body is bytes: undici encodes a string body into a fresh buffer on every
 * request (256 KB for the largest conversation).
 */
export interface LoadRequest {
  dialect: Dialect;
  stream: boolean;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** What requests to one target measured: successes' latencies in ms, streams' time to first `data:` frame, errors. */
export interface ChatTally {
  latencies: number[];
  ttfb: number[];
  seconds: number;
  errors: number;
  /** The first few errors' messages, to print. */
  errorSamples: string[];
}

export const emptyTally = (): ChatTally => ({ latencies: [], ttfb: [], seconds: 0, errors: 0, errorSamples: [] });

const prompt = "Say hello";
/** The `max_tokens` of a Messages request (Anthropic's API requires one). */
const messagesMaxTokens = 1024;
/** The API version every Anthropic client sends. */
const messagesHeaders = { "anthropic-version": "2023-06-01" };

/**
 * The body of `dialect`: chat `{model, messages, stream}` (one "Say hello" message, or with a prompt size the
 * conversation of that size), Responses `{model, input, stream}`, Messages `{model, max_tokens, messages,
 * stream}`, embeddings `{model, input, encoding_format}` with the 16 passages of `embeddingInputs` and base64
 * vectors asked for, as the official openai SDK asks by default.
 */
function requestBody(dialect: Dialect, model: string, stream: boolean, size: PromptSize | undefined): object {
  if (size) {
    if (dialect !== "chat") throw new Error(`a prompt size is for chat plans only, not the ${apiNames[dialect]} API`);
    return { model, messages: conversation(size), stream };
  }
  if (dialect === "embeddings") return { model, input: embeddingInputs, encoding_format: "base64" };
  if (dialect === "responses") return { model, input: prompt, stream };
  const messages = [{ role: "user", content: prompt }];
  return dialect === "messages" ? { model, max_tokens: messagesMaxTokens, messages, stream } : { model, messages, stream };
}

/** The request of `dialect`, mode and prompt size (chat only) to `endpoint`, on the route the endpoint has for the dialect. */
export function loadRequest(endpoint: ChatEndpoint, dialect: Dialect, stream: boolean, size?: PromptSize): LoadRequest {
  const route = endpoint.routes[dialect];
  if (!route) throw new Error(`${endpoint.origin} does not serve the ${apiNames[dialect]} API`);
  if (stream && !streams(dialect)) throw new Error(`the ${apiNames[dialect]} API has no streamed answers`);
  const headers = { "content-type": "application/json", ...endpoint.headers, ...(dialect === "messages" ? messagesHeaders : {}) };
  return { dialect, stream, path: route.path, headers, body: Buffer.from(JSON.stringify(requestBody(dialect, route.model, stream, size))) };
}

/**
 * What a complete answer of each dialect holds: `[DONE]` or the last event of a stream (none for embeddings,
 * which are not streamed), markers of the whole answer's body (all of them).
 */
const complete: Record<Dialect, { stream?: string; buffered: readonly string[] }> = {
  chat: { stream: "data: [DONE]", buffered: ['"choices"'] },
  responses: { stream: "response.completed", buffered: ['"object":"response"'] },
  messages: { stream: "event: message_stop", buffered: ['"type":"message"'] },
  embeddings: { buffered: ['"object":"list"', '"embedding":'] },
};

/**
 * Why a 200's body is not a complete answer, or undefined when it is: chat's streams end with `data: [DONE]`
 * and its answers have `choices`; a Responses stream has its `response.completed` event (and no `[DONE]`),
 * a buffered one is a `response` object; a Messages stream has its `message_stop` event, a buffered one is a
 * `message` object; an embeddings answer is a `list` with at least one `embedding` field.
 */
export function incompleteAnswer(dialect: Dialect, stream: boolean, body: readonly Buffer[]): string | undefined {
  const markers = complete[dialect];
  const text = () => Buffer.concat(body).toString("utf8");
  if (stream) {
    if (!markers.stream) return `a streamed answer of the ${apiNames[dialect]} API, which has none: ${text().slice(0, 300)}`;
    return holds(body, markers.stream) ? undefined : `stream without ${markers.stream}: ${text().slice(-300)}`;
  }
  const missing = markers.buffered.find((marker) => !holds(body, marker));
  return missing === undefined ? undefined : `answer without ${missing}: ${text().slice(0, 300)}`;
}

/**
 * Whether the bytes of `chunks`, taken as one, hold `marker` (ASCII), looking only from chunk `from` on (and
 * across its boundary with the one before). Searched in the chunks as they came: decoding a 132 KB embeddings
 * answer into a string and searching that cost the load generator about 0.75 ms per answer, on the cores the
 * targets share.
 */
export function holds(chunks: readonly Buffer[], marker: string, from = 0): boolean {
  const reach = marker.length - 1;
  for (let i = from; i < chunks.length; i++) {
    const chunk = chunks[i]!;
    if (chunk.includes(marker, 0, "latin1")) return true;
    if (i === 0) continue;
    const seam = Buffer.concat([...lastBytes(chunks, i, reach), chunk.subarray(0, reach)]);
    if (seam.includes(marker, 0, "latin1")) return true;
  }
  return false;
}

/** The last `count` bytes of the chunks before index `end`, in order. */
function lastBytes(chunks: readonly Buffer[], end: number, count: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = end - 1, left = count; i >= 0 && left > 0; i--) {
    const chunk = chunks[i]!;
    parts.unshift(chunk.subarray(Math.max(0, chunk.length - left)));
    left -= chunk.length;
  }
  return parts;
}

function fail(tally: ChatTally, message: string) {
  tally.errors++;
  if (tally.errorSamples.length < 5) tally.errorSamples.push(message);
}

/**
 * One request; records its latency (to the end of the body: for streams, past `[DONE]` or the last event) and,
 * for streams, the time to the first `data:` frame. An answer that is not a 200 with a complete body is an error.
 */
export async function chatRequest(pool: Pool, request: LoadRequest, tally: ChatTally): Promise<void> {
  const { stream } = request;
  const start = performance.now();
  try {
    const res = await pool.request({
      method: "POST",
      path: request.path,
      headers: request.headers,
      body: request.body,
    });
    const body: Buffer[] = [];
    let firstFrame: number | undefined;
    for await (const chunk of res.body) {
      body.push(chunk as Buffer);
      if (stream && firstFrame === undefined && holds(body, "data:", body.length - 1)) firstFrame = performance.now() - start;
    }
    const total = performance.now() - start;
    if (res.statusCode !== 200) return fail(tally, `status ${res.statusCode}: ${Buffer.concat(body).toString("utf8").slice(0, 300)}`);
    const incomplete = incompleteAnswer(request.dialect, stream, body);
    if (incomplete) return fail(tally, incomplete);
    tally.latencies.push(total);
    if (firstFrame !== undefined) tally.ttfb.push(firstFrame);
  } catch (error) {
    fail(tally, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

/** `count` requests of the plan's dialect, mode and prompt size with `concurrency` workers (each waits for its answer before the next); adds to `tally`. */
export async function chatLoad(
  pool: Pool,
  endpoint: ChatEndpoint,
  plan: { dialect: Dialect; stream: boolean; prompt?: PromptSize | undefined },
  count: number,
  concurrency: number,
  tally: ChatTally,
): Promise<void> {
  const request = loadRequest(endpoint, plan.dialect, plan.stream, plan.prompt);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await chatRequest(pool, request, tally);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  tally.seconds += (performance.now() - started) / 1000;
}
