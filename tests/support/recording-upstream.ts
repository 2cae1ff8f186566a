import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { UpstreamError, type UpstreamTarget } from "@switchyard/upstream";
import { expect } from "vitest";

/** A request the fake received: its path, headers and JSON body. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** How the fake answers a request: a status (200 unless set) with JSON or raw text, or no answer at all. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  raw?: string;
  hang?: boolean;
}

export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`, with no path. */
  origin: string;
  /** Every request received, in order. */
  requests: Received[];
  /** Requests whose caller went away before the answer ended. */
  aborted(): number;
  /** What the next requests are answered with: one reply, or one per request. */
  answer(reply: Reply | ((request: Received) => Reply)): void;
  last(): Received;
  stop(): Promise<void>;
}

/** A provider on 127.0.0.1 for the retrieval adapters' tests. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: Received[] = [];
  let aborted = 0;
  let replyTo: (request: Received) => Reply = () => ({ json: {} });
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = { path: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> };
    requests.push(received);
    res.on("close", () => {
      if (!res.writableFinished) aborted++;
    });
    const reply = replyTo(received);
    if (reply.hang) return;
    res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
    res.end(reply.raw ?? JSON.stringify(reply.json));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    aborted: () => aborted,
    answer(reply) {
      replyTo = typeof reply === "function" ? reply : () => reply;
    },
    last: () => requests.at(-1)!,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A target for `baseUrl`, with the key `<provider>-secret` unless it is not `keyed`. */
export const targetAt = (baseUrl: string, provider: string, upstreamModel: string, keyed = true): UpstreamTarget => ({
  provider,
  baseUrl,
  apiKey: keyed ? `${provider}-secret` : undefined,
  upstreamModel,
  maxCompletionTokens: null,
});

/** What a promise rejected with; throws when it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

/** The `UpstreamError` a promise rejected with; fails the test when it resolved or rejected otherwise. */
export async function upstreamError(promise: Promise<unknown>): Promise<UpstreamError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}
