import { silentLogger } from "@switchyard/runtime";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConsole } from "./console-files.js";

let dir: string;
const servers: http.Server[] = [];

async function serve(from: string): Promise<string> {
  const handler = await loadConsole(silentLogger(), from);
  const server = http.createServer((req, res) => handler(req, res, new URL(req.url!, "http://x").pathname));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "console-"));
  await writeFile(join(dir, "index.html"), "<!doctype html><title>console</title>");
  await writeFile(join(dir, "app.js"), "export {};");
  await writeFile(join(dir, "notes.md"), "not served");
});
afterAll(async () => {
  for (const server of servers) server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("console files", () => {
  it("serves the page at /console and /console/ with a strict policy, and its assets with their types", async () => {
    const base = await serve(dir);
    for (const path of ["/console", "/console/"]) {
      const res = await fetch(base + path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toContain("script-src 'self';");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy")).not.toContain("unsafe-inline");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await res.text()).toContain("<title>console</title>");
    }
    const script = await fetch(`${base}/console/app.js`);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toBe("export {};");
  });

  it("answers 304 to a matching ETag, 404 to what it does not serve and 405 to writes", async () => {
    const base = await serve(dir);
    const first = await fetch(`${base}/console/app.js`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect((await fetch(`${base}/console/app.js`, { headers: { "if-none-match": etag } })).status).toBe(304);
    for (const path of ["/console/notes.md", "/console/%2e%2e/index.html", "/console/missing.js"]) expect((await fetch(base + path)).status).toBe(404);
    const post = await fetch(`${base}/console`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await fetch(`${base}/console`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("says the console is not built instead of failing the start", async () => {
    const base = await serve(join(dir, "never-built"));
    const res = await fetch(`${base}/console`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build");
  });
});
