import { execFileSync } from "node:child_process";
import { Agent, request } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogEnv } from "./support/catalog-fixture.js";
import { testEnv } from "./support/config.js";
import { eventually } from "./support/eventually.js";
import { startFakeProvider, type FakeProvider } from "./support/fake-provider.js";
import { startProcess, type TestProcess } from "./support/process.js";

/**
 * The built gateway on Node.js 24, the Active LTS, beside the suite's own Node: `.ci/run` installs Node 24
 * from the npm registry and names it in NODE24_BIN; elsewhere, without one, this is skipped.
 */
const node24 = testEnv.node24;
const management = "node24-management-secret-0123456789abcdef";
let proc: TestProcess;
let provider: FakeProvider;
let dataDir: string;
let apiUrl: string;

beforeAll(async () => {
  if (!node24) {
    if (testEnv.ci) throw new Error("NODE24_BIN is not set: .ci/run installs Node 24 and sets it");
    return;
  }
  provider = await startFakeProvider("alpha");
  dataDir = await mkdtemp(join(tmpdir(), "switchyard-node24-"));
  const env = await catalogEnv({
    providers: [{ slug: "alpha", name: "Alpha", adapter: "openai-compatible", base_url: provider.baseUrl, requires_api_key: false }],
    models: [{ id: "chat/ok", name: "ok", context_length: 8000, endpoints: [{ provider: "alpha", upstream_model: "ok", pricing: { prompt: "0.00001", completion: "0.00003" } }] }],
  });
  proc = startProcess("services/standalone/dist/main.js", { ...env, PORT: "0", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_BOOTSTRAP_KEY: management }, node24);
  apiUrl = `http://127.0.0.1:${(await proc.waitFor(/"port":(\d+)/, 60_000))[1]}/api/v1`;
}, 90_000);
afterAll(async () => {
  if (proc) expect(await proc.stop()).toBe(0);
  await provider?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe.skipIf(!node24 && !testEnv.ci)("the gateway on Node.js 24", () => {
  it("runs on Node 24", () => {
    expect(execFileSync(node24!, ["--version"], { encoding: "utf8" })).toMatch(/^v24\./);
  });

  it("makes a key, answers a chat buffered and streamed with the openai SDK, and charges it", async () => {
    const created = await fetch(`${apiUrl}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${management}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "on node 24", limit: 1 }),
    });
    const { key, data } = (await created.json()) as { key: string; data: { hash: string } };
    const openai = new OpenAI({ apiKey: key, baseURL: apiUrl });
    const answer = await openai.chat.completions.create({ model: "chat/ok", messages: [{ role: "user", content: "hi" }] });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    let text = "";
    for await (const chunk of await openai.chat.completions.create({ model: "chat/ok", stream: true, messages: [{ role: "user", content: "hi" }] })) {
      text += chunk.choices[0]?.delta.content ?? "";
    }
    expect(text).toBe("Hello from alpha");
    // Two generations of 12 prompt and 5 completion tokens: 2 × $0.00027.
    await eventually(async () => {
      const res = await fetch(`${apiUrl}/keys/${data.hash}`, { headers: { authorization: `Bearer ${management}` } });
      return Math.abs(((await res.json()) as { data: { usage: number } }).data.usage - 0.00054) < 1e-9;
    }, 10_000);
  });

  it("streams every event of chat, Responses and Messages to the end, on one kept-alive connection", async () => {
    const created = await fetch(`${apiUrl}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${management}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "streams on node 24" }),
    });
    const { key } = (await created.json()) as { key: string };
    // One socket for every request: bytes a stream wrote after its end would be read as the next answer.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      new Promise<string>((resolve, reject) => {
        const req = request(`${apiUrl}${path}`, { method: "POST", agent, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve(`${res.statusCode} ${text}`));
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end(JSON.stringify(body));
      });
    const messages = [{ role: "user", content: "hi" }];
    try {
      for (let round = 0; round < 2; round++) {
        const chat = await post("/chat/completions", { model: "chat/ok", stream: true, messages });
        expect(chat).toMatch(/^200 /);
        expect(chat).toContain('"content":"from alpha"');
        expect(chat.endsWith("data: [DONE]\n\n")).toBe(true);
        const responses = await post("/responses", { model: "chat/ok", stream: true, input: "hi" });
        expect(responses).toMatch(/^200 /);
        expect(responses).toContain('"delta":"from alpha"');
        expect(responses.trimEnd().split("\n\n").at(-1)).toMatch(/^event: response\.completed\n/);
        const anthropic = await post("/messages", { model: "chat/ok", max_tokens: 64, stream: true, messages }, { "anthropic-version": "2023-06-01" });
        expect(anthropic).toMatch(/^200 /);
        expect(anthropic).toContain('"text":"from alpha"');
        expect(anthropic.trimEnd().split("\n\n").at(-1)).toMatch(/^event: message_stop\n/);
      }
    } finally {
      agent.destroy();
    }
  });
});
