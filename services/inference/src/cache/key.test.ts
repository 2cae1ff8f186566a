import { HttpError } from "@switchyard/runtime";
import { describe, expect, it } from "vitest";
import { cacheRequest } from "./headers.js";
import { cacheKey, canonicalJson } from "./key.js";

const base = {
  workspaceId: "6f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c",
  dialect: "chat",
  stream: false,
  client: { model: "vendor/a", messages: [{ role: "user", content: "Hi" }], temperature: 0.2 },
  sent: { messages: [{ role: "user", content: "Hi" }], temperature: 0.2 },
};

describe("canonicalJson", () => {
  it("sorts keys at every depth, keeps array order and drops undefined fields", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: null }], c: undefined } })).toBe('{"a":{"d":[2,{"y":null,"z":1}]},"b":1}');
    expect(canonicalJson([3, 1])).not.toBe(canonicalJson([1, 3]));
  });
});

describe("cacheKey", () => {
  it("is the same for the same request written with its keys in another order", () => {
    const reordered = { ...base, client: { temperature: 0.2, messages: [{ content: "Hi", role: "user" }], model: "vendor/a" } };
    expect(cacheKey(reordered)).toBe(cacheKey(base));
    expect(cacheKey(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("ignores stream_options and the stream field of the body, but not the streaming mode", () => {
    const withOptions = { ...base, client: { ...base.client, stream: false, stream_options: { include_usage: true } } };
    expect(cacheKey(withOptions)).toBe(cacheKey(base));
    expect(cacheKey({ ...base, stream: true })).not.toBe(cacheKey(base));
  });

  it("differs by workspace, endpoint, model, messages, parameters and what providers would be sent", () => {
    const key = cacheKey(base);
    expect(cacheKey({ ...base, workspaceId: "7f1c2a9e-5b7d-4c1e-9a2b-6d8e0f1a2b3c" })).not.toBe(key);
    expect(cacheKey({ ...base, dialect: "responses" })).not.toBe(key);
    expect(cacheKey({ ...base, client: { ...base.client, model: "vendor/b" } })).not.toBe(key);
    expect(cacheKey({ ...base, client: { ...base.client, messages: [{ role: "user", content: "Hi!" }] } })).not.toBe(key);
    expect(cacheKey({ ...base, client: { ...base.client, temperature: 0.3 } })).not.toBe(key);
    // A guardrail's new redaction or a preset's new system prompt changes the body sent, not the client's.
    expect(cacheKey({ ...base, sent: { ...base.sent, messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "Hi" }] } })).not.toBe(key);
  });
});

describe("cacheRequest", () => {
  const status = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return error instanceof HttpError ? error.status : -1;
    }
    return 0;
  };

  it("is off without the header or with false, and on with true at OpenRouter's default TTL", () => {
    expect(cacheRequest({}, 86_400)).toBeUndefined();
    expect(cacheRequest({ "x-openrouter-cache": "false" }, 86_400)).toBeUndefined();
    expect(cacheRequest({ "x-openrouter-cache": "true" }, 86_400)).toEqual({ ttlSeconds: 300 });
    expect(cacheRequest({ "x-openrouter-cache": "TRUE" }, 86_400)).toEqual({ ttlSeconds: 300 });
    // The default never passes the operator's maximum.
    expect(cacheRequest({ "x-openrouter-cache": "true" }, 60)).toEqual({ ttlSeconds: 60 });
  });

  it("takes a TTL of whole seconds from 1 to the maximum", () => {
    expect(cacheRequest({ "x-openrouter-cache": "true", "x-openrouter-cache-ttl": "1" }, 86_400)).toEqual({ ttlSeconds: 1 });
    expect(cacheRequest({ "x-openrouter-cache": "true", "x-openrouter-cache-ttl": "86400" }, 86_400)).toEqual({ ttlSeconds: 86_400 });
  });

  it("refuses other values with 400", () => {
    expect(status(() => cacheRequest({ "x-openrouter-cache": "yes" }, 86_400))).toBe(400);
    for (const ttl of ["0", "-5", "1.5", "abc", "", "86401", "1e3"]) {
      expect(status(() => cacheRequest({ "x-openrouter-cache": "true", "x-openrouter-cache-ttl": ttl }, 86_400)), ttl).toBe(400);
    }
  });
});
