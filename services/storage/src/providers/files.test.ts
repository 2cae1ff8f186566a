import { createServer, type IncomingHttpHeaders } from "node:http";
import { UpstreamError } from "@switchyard/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../../tests/support/listen.js";
import { anthropicFiles } from "./anthropic-files.js";
import { openAiFiles } from "./openai-files.js";

interface Plan {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

let baseUrl: string;
let stop: () => Promise<void>;
let plan: Plan;
let seen: { method: string; url: string; headers: IncomingHttpHeaders };

beforeAll(async () => {
  const server = createServer((req, res) => {
    seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers };
    req.resume();
    req.on("end", () => void res.writeHead(plan.status, { "content-type": "application/json", ...plan.headers }).end(plan.body));
  });
  ({ baseUrl, stop } = await listenLocal(server));
});
afterAll(() => stop());

const account = () => ({ baseUrl, apiKey: "sk-own" });
const signal = () => new AbortController().signal;
const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
};

describe("provider Files API adapters", () => {
  it("speaks Anthropic's beta headers and cursors, and maps its file", async () => {
    plan = { status: 200, body: JSON.stringify({ data: [{ id: "file_1", type: "file", filename: "a.pdf", mime_type: "application/pdf", size_bytes: 9, created_at: "2026-01-01T00:00:00Z" }], has_more: true }) };
    const page = await anthropicFiles.list({ limit: 5, after: "file_0", before: undefined }, account(), signal());
    expect(seen.url).toBe("/v1/files?limit=5&after_id=file_0");
    expect(seen.headers).toMatchObject({ "x-api-key": "sk-own", "anthropic-version": "2023-06-01", "anthropic-beta": "files-api-2025-04-14" });
    expect(page).toEqual({
      data: [{ _shape: "anthropic", id: "file_1", filename: "a.pdf", mime_type: "application/pdf", size_bytes: 9, created_at: "2026-01-01T00:00:00Z", downloadable: false, type: "file" }],
      first_id: "file_1",
      last_id: "file_1",
      has_more: true,
    });
  });

  it("refuses a reverse cursor for OpenAI, which has none, without calling it", async () => {
    seen = { method: "", url: "", headers: {} };
    const error = await failure(openAiFiles.list({ limit: 5, before: "file-1" }, account(), signal()));
    expect(error).toMatchObject({ status: 400, retryable: false });
    expect(seen.url).toBe("");
  });

  it("turns 404, 429 with Retry-After and garbage into provider errors", async () => {
    plan = { status: 404, body: JSON.stringify({ error: { message: "No such file" } }) };
    expect(await failure(openAiFiles.retrieve("file-9", account(), signal()))).toMatchObject({ status: 404, retryable: false });
    expect(seen).toMatchObject({ method: "GET", url: "/v1/files/file-9", headers: { authorization: "Bearer sk-own" } });
    plan = { status: 429, body: "{}", headers: { "retry-after": "12" } };
    expect(await failure(anthropicFiles.remove("file_1", account(), signal()))).toMatchObject({ status: 429, retryable: true, retryAfterMs: 12_000 });
    plan = { status: 200, body: "<html>proxy error</html>" };
    expect(await failure(openAiFiles.retrieve("file-9", account(), signal()))).toMatchObject({ status: 502 });
  });

  it("encodes ids in paths", async () => {
    plan = { status: 200, body: JSON.stringify({ id: "a/b", deleted: true }) };
    await openAiFiles.remove("a/b?x", account(), signal());
    expect(seen).toMatchObject({ method: "DELETE", url: "/v1/files/a%2Fb%3Fx" });
  });
});
