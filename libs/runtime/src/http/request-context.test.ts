import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { silentLogger } from "../log.js";
import { createHttpApp, finishHttpApp } from "./app.js";
import { createInternalClient } from "./internal-client.js";
import type { Server } from "node:http";

const servers: Server[] = [];
const listen = async (app: ReturnType<typeof createHttpApp>) => {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
afterAll(() => servers.forEach((s) => s.close()));

describe("request ids across hops", () => {
  it("carries the request's id on the internal calls made while handling it", async () => {
    const logger = silentLogger();
    const inner = createHttpApp({ logger });
    inner.post("/internal/echo", (req, res) => void res.json({ seen: req.headers["x-request-id"] }));
    const innerUrl = await listen(finishHttpApp(inner, logger));
    const client = createInternalClient(innerUrl, async () => "token");
    const outer = createHttpApp({ logger });
    outer.get("/work", async (_req, res) => {
      // Later in the same request, after other awaits, the id is still there.
      await new Promise((resolve) => setTimeout(resolve, 5));
      res.json(await client.post("/internal/echo", {}, z.object({ seen: z.string().optional() })));
    });
    const outerUrl = await listen(finishHttpApp(outer, logger));
    const given = await fetch(`${outerUrl}/work`, { headers: { "x-request-id": "req-from-router-42" } }).then((r) => r.json());
    expect(given).toEqual({ seen: "req-from-router-42" });
    const made = await fetch(`${outerUrl}/work`);
    const id = made.headers.get("x-request-id");
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await made.json()).toEqual({ seen: id });
  });
});
