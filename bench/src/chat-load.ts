import type { Pool } from "undici";

/** Where and how a target takes a chat completion. */
export interface ChatEndpoint {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  path: string;
  headers: Record<string, string>;
  model: string;
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

const messages = [{ role: "user", content: "Say hello" }];

/** Bodies are made once per endpoint and mode, so the load generator's own work stays out of the figures. */
export const chatBody = (endpoint: ChatEndpoint, stream: boolean) => JSON.stringify({ model: endpoint.model, messages, stream });

function fail(tally: ChatTally, message: string) {
  tally.errors++;
  if (tally.errorSamples.length < 5) tally.errorSamples.push(message);
}

/**
 * One chat completion; records its latency (to the end of the body: for streams, past `[DONE]`) and, for
 * streams, the time to the first `data:` frame. An answer that is not a 200 with a complete body is an error.
 */
export async function chatRequest(pool: Pool, endpoint: ChatEndpoint, body: string, stream: boolean, tally: ChatTally): Promise<void> {
  const start = performance.now();
  try {
    const res = await pool.request({
      method: "POST",
      path: endpoint.path,
      headers: { "content-type": "application/json", ...endpoint.headers },
      body,
    });
    let text = "";
    let firstFrame: number | undefined;
    for await (const chunk of res.body) {
      text += (chunk as Buffer).toString("utf8");
      if (stream && firstFrame === undefined && text.includes("data:")) firstFrame = performance.now() - start;
    }
    const total = performance.now() - start;
    if (res.statusCode !== 200) return fail(tally, `status ${res.statusCode}: ${text.slice(0, 300)}`);
    if (stream && !text.includes("data: [DONE]")) return fail(tally, `stream without [DONE]: ${text.slice(-300)}`);
    if (!stream && !text.includes('"choices"')) return fail(tally, `answer without choices: ${text.slice(0, 300)}`);
    tally.latencies.push(total);
    if (firstFrame !== undefined) tally.ttfb.push(firstFrame);
  } catch (error) {
    fail(tally, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  }
}

/** `count` requests with `concurrency` workers (each waits for its answer before the next); adds to `tally`. */
export async function chatLoad(pool: Pool, endpoint: ChatEndpoint, stream: boolean, count: number, concurrency: number, tally: ChatTally): Promise<void> {
  const body = chatBody(endpoint, stream);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await chatRequest(pool, endpoint, body, stream, tally);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  tally.seconds += (performance.now() - started) / 1000;
}
