import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeUpstream } from "./fake-upstream.js";

/** The built child, as the benchmark forks it. */
const script = new URL("../dist/proxy-child.js", import.meta.url);

let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let proxy: ChildProcess;
let origin: string;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = fork(script, { env: { ...process.env, BENCH_PROXY_UPSTREAM: upstream.url }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const [ready] = (await once(proxy, "message")) as [{ ready: boolean; port: number }];
  origin = `http://127.0.0.1:${ready.port}`;
});

afterAll(async () => {
  if (proxy.exitCode === null) {
    proxy.send("stop");
    await once(proxy, "exit");
  }
  upstream.close();
});

/** The same POST straight to the upstream and through the proxy: status, headers and body of each. */
async function both(path: string, body: unknown) {
  const send = async (base: string) => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, type: res.headers.get("content-type"), length: res.headers.get("content-length"), body: await res.text() };
  };
  return { direct: await send(new URL(upstream.url).origin), proxied: await send(origin) };
}

describe("the bare proxy (the benchmark's proxy target)", () => {
  it("answers a chat completion, an embeddings list and a Messages stream as the upstream does", async () => {
    const chat = await both("/v1/chat/completions", { model: "bench", messages: [{ role: "user", content: "Say hello" }] });
    expect(chat.proxied).toEqual(chat.direct);
    expect(chat.proxied.body).toContain('"choices"');

    const embeddings = await both("/v1/embeddings", { model: "bench", input: ["one", "two"], encoding_format: "base64" });
    expect(embeddings.proxied).toEqual(embeddings.direct);
    expect(Number(embeddings.proxied.length)).toBeGreaterThan(10_000);

    const stream = await both("/v1/messages", { model: "bench", max_tokens: 16, messages: [{ role: "user", content: "Say hello" }], stream: true });
    expect(stream.proxied).toEqual(stream.direct);
    expect(stream.proxied.body).toContain("event: message_stop");
  });

  it("answers 502 when the upstream cannot be reached, and stops when asked", async () => {
    upstream.close();
    const res = await fetch(`${origin}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(502);
    proxy.send("stop");
    const [code] = (await once(proxy, "exit")) as [number];
    expect(code).toBe(0);
  });
});
