import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { openPglite, silentLogger, type Db } from "@switchyard/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lookUp } from "./lookup.js";
import { ResponseCacheStore } from "./store.js";

describe("a response cache lookup", () => {
  let db: Db;
  beforeAll(async () => {
    // No migrations: the cache's table is missing, as when its database fails, and every read fails.
    db = await openPglite();
  });
  afterAll(() => db?.close());

  it("answers a request whose lookup failed as a miss, not an error", async () => {
    const res = new ServerResponse(new IncomingMessage(new Socket()));
    const cache = { store: new ResponseCacheStore(db), maxTtlSeconds: 60, maxEntryBytes: 1024, logger: silentLogger() };
    const caller = { keyHash: "k", workspaceId: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b02", organizationId: "3f2c8a0e-3c5a-4a4e-9a7b-7d1f1e2a9b01", management: false };
    const found = await lookUp(cache, { res, caller, dialect: "chat", stream: false, kind: "buffered", client: {}, sent: {}, candidates: [], ttlSeconds: 60, bypass: false });
    expect(found).toMatchObject({ ttlSeconds: 60, hit: undefined });
    expect(res.getHeader("x-openrouter-cache-status")).toBe("MISS");
  });
});
