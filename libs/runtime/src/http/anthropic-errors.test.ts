import Anthropic from "@anthropic-ai/sdk";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../log.js";
import { anthropicErrorBody, anthropicErrorType, sendAnthropicError } from "./anthropic-errors.js";
import { badRequest, HttpError, notFound } from "./errors.js";

let server: Server;
let url: string;

/** What each path fails with. */
const failures: Record<string, () => unknown> = {
  "/bad": () => badRequest("Invalid body: max_tokens: must be at least 1"),
  "/missing": () => notFound("Model anthropic/nope not found"),
  "/limited": () => new HttpError("rate_limited", "Rate limit exceeded", undefined, { "Retry-After": "30" }),
  "/busy": () => new HttpError("unavailable", "No endpoint is available"),
  "/overloaded": () => new HttpError("provider_overloaded", "Overloaded"),
  "/broken": () => new Error("a bug's own message"),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/started") {
        // A stream already under way: the failure only ends it.
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        res.write("event: ping\ndata: {}\n\n");
        sendAnthropicError(res, badRequest("late"), silentLogger(), undefined);
        return;
      }
      const path = (req.url ?? "").replace(/^\/v1\/messages$/, "/bad");
      sendAnthropicError(res, (failures[path] ?? failures["/broken"]!)(), silentLogger(), "req-1");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const get = async (path: string) => {
  const res = await fetch(`${url}${path}`);
  return { status: res.status, retryAfter: res.headers.get("retry-after"), type: res.headers.get("content-type"), body: await res.text() };
};

describe("anthropicErrorType", () => {
  it("names each status as Anthropic's API does", () => {
    const table: Array<[number, string]> = [
      [400, "invalid_request_error"],
      [422, "invalid_request_error"],
      [401, "authentication_error"],
      [402, "billing_error"],
      [403, "permission_error"],
      [404, "not_found_error"],
      [413, "request_too_large"],
      [429, "rate_limit_error"],
      [500, "api_error"],
      [502, "api_error"],
      [503, "overloaded_error"],
      [529, "overloaded_error"],
      [504, "timeout_error"],
      [524, "timeout_error"],
      [409, "api_error"],
    ];
    expect(table.map(([status]) => anthropicErrorType(status))).toEqual(table.map(([, type]) => type));
    expect(anthropicErrorBody(404, "gone")).toEqual({ type: "error", error: { type: "not_found_error", message: "gone" } });
  });
});

describe("sendAnthropicError", () => {
  it("answers with the error's status and Anthropic's body", async () => {
    expect(await get("/bad")).toEqual({
      status: 400,
      retryAfter: null,
      type: "application/json; charset=utf-8",
      body: JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "Invalid body: max_tokens: must be at least 1" } }),
    });
    expect(JSON.parse((await get("/missing")).body)).toEqual({ type: "error", error: { type: "not_found_error", message: "Model anthropic/nope not found" } });
    expect(JSON.parse((await get("/overloaded")).body)).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
  });

  it("says when to come back, keeping a wait the error names", async () => {
    expect(await get("/limited")).toMatchObject({ status: 429, retryAfter: "30" });
    expect(await get("/busy")).toMatchObject({ status: 503, retryAfter: "5", body: JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "No endpoint is available" } }) });
  });

  it("hides an unexpected error's message behind a 500", async () => {
    expect(await get("/broken")).toMatchObject({ status: 500, body: JSON.stringify({ type: "error", error: { type: "api_error", message: "Internal server error" } }) });
  });

  it("only ends a response already under way", async () => {
    expect(await get("/started")).toEqual({ status: 200, retryAfter: null, type: "text/event-stream", body: "event: ping\ndata: {}\n\n" });
  });

  it("is read by the Anthropic SDK as the API's own error", async () => {
    const client = new Anthropic({ apiKey: "k", baseURL: url, maxRetries: 0 });
    const failure = await client.messages.create({ model: "claude-x", max_tokens: 0, messages: [{ role: "user", content: "Hi" }] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
    expect(failure).toMatchObject({ status: 400, type: "invalid_request_error", apiMessage: "Invalid body: max_tokens: must be at least 1" });
  });
});
