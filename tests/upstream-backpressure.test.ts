import { once } from "node:events";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { eventually } from "./support/eventually.js";
import { startTestGateway, type TestGateway } from "./support/gateway.js";
import { listenLocal } from "./support/listen.js";
import { rawConnection, type RawConnection } from "./support/raw-socket.js";

/**
 * A client that reads slowly slows its stream down to its own pace: the gateway reads from the provider only
 * as fast as the client takes what it relays, instead of holding the rest of the answer in memory.
 */
const pieceChars = 16_000;
const pieces = 2_000;
/** The answer's size on the upstream's wire: 32 MB of text, in chunks of 16 KB. */
const answerBytes = pieces * pieceChars;
const deadlineMs = 15_000;

interface Upstream {
  /** Bytes of the answer the provider has handed to its socket. */
  sent: number;
  /** The provider's answer ended (all of it sent) or its connection closed before. */
  ended: "done" | "closed" | undefined;
}
const streams: Upstream[] = [];

let gw: TestGateway;
let upstream: { baseUrl: string; stop(): Promise<void> };

beforeAll(async () => {
  const server = createServer(async (req, res) => {
    for await (const piece of req) void piece;
    const state: Upstream = { sent: 0, ended: undefined };
    streams.push(state);
    res.on("close", () => (state.ended ??= "closed"));
    res.writeHead(200, { "content-type": "text/event-stream" });
    const frame = (payload: object) => `data: ${JSON.stringify({ id: "big", object: "chat.completion.chunk", created: 1, model: "big", ...payload })}\n\n`;
    const text = "x".repeat(pieceChars);
    for (let i = 0; i < pieces; i++) {
      if (res.destroyed) return;
      // A provider that keeps to its own socket's pace, so that what it sent is what the gateway read.
      if (!res.write(frame({ choices: [{ index: 0, delta: { content: text }, finish_reason: null }] }))) await Promise.race([once(res, "drain"), once(res, "close")]);
      state.sent += pieceChars;
    }
    res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
    res.write(frame({ choices: [], usage: { prompt_tokens: 10, completion_tokens: pieces, total_tokens: 10 + pieces } }));
    res.end("data: [DONE]\n\n");
    state.ended ??= "done";
  });
  upstream = await listenLocal(server);
  const catalog = {
    providers: [{ slug: "big", name: "Big", adapter: "openai-compatible", base_url: upstream.baseUrl, requires_api_key: false }],
    models: [{ id: "big/stream", name: "Big", context_length: 8000, endpoints: [{ provider: "big", upstream_model: "big", pricing: { prompt: "0.000001", completion: "0.000002" } }] }],
  };
  gw = await startTestGateway({ ...(await catalogEnv(catalog)), REQUEST_TIMEOUT_MS: String(deadlineMs), UPSTREAM_IDLE_TIMEOUT_MS: "1500" });
});
afterAll(async () => {
  await gw?.stop();
  await upstream?.stop();
});

/** A streamed request on a raw connection that reads nothing until told: the client's socket is paused at once. */
async function pausedClient(key: string): Promise<RawConnection> {
  const connection = await rawConnection(Number(new URL(gw.baseUrl).port));
  connection.socket.pause();
  const body = JSON.stringify({ model: "big/stream", messages: [{ role: "user", content: "Say a lot" }], stream: true });
  await connection.write(
    `POST /api/v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return connection;
}

/** Waits until the provider's stream has sent nothing more for a second (or ended): how far a paused client let it go. */
async function settledSent(stream: () => Upstream | undefined): Promise<number> {
  let last = -1;
  let still = 0;
  await eventually(async () => {
    const now = stream()?.sent ?? -1;
    still = now === last ? still + 1 : 0;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 250));
    return (stream()?.ended !== undefined || still >= 4) && now >= 0;
  }, 20_000);
  return stream()!.sent;
}

const key = async (name: string) => String((await gw.call("POST", "/keys", { body: { name } })).body.key);

describe("a client that stops reading its stream", () => {
  it("stops the provider's stream too, and gets the whole answer once it reads again", async () => {
    const own = await key("paused");
    const before = streams.length;
    const client = await pausedClient(own);
    const sent = await settledSent(() => streams[before]);
    // Socket buffers between the three parties hold a few megabytes; the rest waits at the provider.
    expect(sent).toBeLessThan(answerBytes / 2);
    // The end of the answer is looked for in what came last: searching all of it at each read would be slow.
    let tail = "";
    const done = new Promise<void>((resolve) =>
      client.socket.on("data", (data: Buffer) => {
        tail = (tail + data.toString("latin1")).slice(-100);
        if (tail.includes("data: [DONE]")) resolve();
      }),
    );
    client.socket.resume();
    await Promise.race([done, client.closed]);
    client.socket.destroy();
    expect(tail).toContain("data: [DONE]");
    expect(streams[before]?.ended).toBe("done");
    const id = /x-generation-id: (\S+)/i.exec(client.received().slice(0, 4000))?.[1];
    await eventually(async () => (await gw.call("GET", `/generation?id=${id}`, { key: own })).status === 200, 10_000);
    const record = (await gw.call("GET", `/generation?id=${id}`, { key: own })).body.data as unknown as { finish_reason: string; tokens_completion: number };
    expect(record).toMatchObject({ finish_reason: "stop", tokens_completion: pieces });
  }, 60_000);

  it("that never reads again ends at the request deadline: the provider's stream is closed and the generation recorded", async () => {
    const own = await key("never");
    const before = streams.length;
    const client = await pausedClient(own);
    await settledSent(() => streams[before]);
    await eventually(async () => streams[before]?.ended === "closed", deadlineMs + 10_000);
    const ids = await gw.call("GET", "/key", { key: own });
    expect(ids.status).toBe(200);
    await eventually(async () => Number((await gw.call("GET", "/key", { key: own })).body.data?.usage) > 0, 10_000);
    client.socket.destroy();
  }, 60_000);
});
