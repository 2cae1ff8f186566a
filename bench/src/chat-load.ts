import type { Pool } from "undici";
import type { Dialect } from "./plans.js";

/** Where and how a target takes a chat completion (and, where it serves one, a Responses API request). */
export interface ChatEndpoint {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  path: string;
  /** `POST` path of the Responses API; unset where the target does not serve it. */
  responsesPath?: string;
  headers: Record<string, string>;
  model: string;
}

/** One kind of request to one endpoint: its path and body, made once so the load generator's own work stays out of the figures. */
export interface LoadRequest {
  dialect: Dialect;
  stream: boolean;
  path: string;
  body: string;
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

/** The request of `dialect` and mode to `endpoint`: chat `{model, messages, stream}`, Responses `{model, input, stream}`. */
export function loadRequest(endpoint: ChatEndpoint, dialect: Dialect, stream: boolean): LoadRequest {
  if (dialect === "chat") return { dialect, stream, path: endpoint.path, body: JSON.stringify({ model: endpoint.model, messages: [{ role: "user", content: prompt }], stream }) };
  if (!endpoint.responsesPath) throw new Error(`${endpoint.origin} does not serve the Responses API`);
  return { dialect, stream, path: endpoint.responsesPath, body: JSON.stringify({ model: endpoint.model, input: prompt, stream }) };
}

/**
 * Why a 200's body is not a complete answer, or undefined when it is: chat's streams end with `data: [DONE]`
 * and its answers have `choices`; a Responses stream has its `response.completed` event (and no `[DONE]`),
 * a buffered one is a `response` object.
 */
export function incompleteAnswer(dialect: Dialect, stream: boolean, text: string): string | undefined {
  if (dialect === "chat") {
    if (stream) return text.includes("data: [DONE]") ? undefined : `stream without [DONE]: ${text.slice(-300)}`;
    return text.includes('"choices"') ? undefined : `answer without choices: ${text.slice(0, 300)}`;
  }
  if (stream) return text.includes("response.completed") ? undefined : `stream without response.completed: ${text.slice(-300)}`;
  return text.includes('"object":"response"') ? undefined : `answer that is not a response object: ${text.slice(0, 300)}`;
}

function fail(tally: ChatTally, message: string) {
  tally.errors++;
  if (tally.errorSamples.length < 5) tally.errorSamples.push(message);
}

/**
 * One request; records its latency (to the end of the body: for streams, past `[DONE]` or the last event) and,
 * for streams, the time to the first `data:` frame. An answer that is not a 200 with a complete body is an error.
 */
export async function chatRequest(pool: Pool, endpoint: ChatEndpoint, request: LoadRequest, tally: ChatTally): Promise<void> {
  const { stream } = request;
  const start = performance.now();
  try {
    const res = await pool.request({
      method: "POST",
      path: request.path,
      headers: { "content-type": "application/json", ...endpoint.headers },
      body: request.body,
    });
    let text = "";
    let firstFrame: number | undefined;
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString("utf8");
      if (stream && firstFrame === undefined && text.includes("data:")) firstFrame = performance.now() - start;
    }
    const total = performance.now() - start;
    if (res.statusCode !== 200) return fail(tally, `status ${res.statusCode}: ${text.slice(0, 300)}`);
    const incomplete = incompleteAnswer(request.dialect, stream, text);
    if (incomplete) return fail(tally, incomplete);
    tally.latencies.push(total);
    if (firstFrame !== undefined) tally.ttfb.push(firstFrame);
  } catch (error) {
    fail(tally, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

/** `count` requests of `dialect` with `concurrency` workers (each waits for its answer before the next); adds to `tally`. */
export async function chatLoad(
  pool: Pool,
  endpoint: ChatEndpoint,
  plan: { dialect: Dialect; stream: boolean },
  count: number,
  concurrency: number,
  tally: ChatTally,
): Promise<void> {
  const request = loadRequest(endpoint, plan.dialect, plan.stream);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await chatRequest(pool, endpoint, request, tally);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  tally.seconds += (performance.now() - started) / 1000;
}
