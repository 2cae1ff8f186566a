import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../tests/support/listen.js";
import { FetchFailed, fetchBytes, FetchRefused, type SafeFetchOptions } from "./safe-fetch.js";

/** What fetching pages adds: named local hosts, a check of every hop, truncation, the final URL, cancelling. */
describe("fetching pages", () => {
  let port = "";
  let stop: () => Promise<void>;
  const paths: string[] = [];

  beforeAll(async () => {
    const server = createServer((req, res) => {
      const path = req.url ?? "";
      paths.push(path);
      if (path === "/page") return void res.writeHead(200, { "content-type": "text/plain" }).end(`agent ${req.headers["user-agent"] ?? "none"}`);
      if (path === "/moved") return void res.writeHead(301, { location: "/page" }).end();
      if (path === "/elsewhere") return void res.writeHead(302, { location: `http://other.test:${port}/page` }).end();
      if (path === "/to-loopback") return void res.writeHead(302, { location: `http://127.0.0.1:${port}/page` }).end();
      if (path === "/to-private") return void res.writeHead(302, { location: "http://10.0.0.8/page" }).end();
      if (path === "/gone") return void res.writeHead(410).end("gone");
      if (path === "/big") return void res.writeHead(200, { "content-type": "text/plain", "content-length": "5000" }).end("y".repeat(5000));
      if (path === "/stream") {
        res.writeHead(200, { "content-type": "text/plain" });
        return void res.end("z".repeat(5000));
      }
      if (path === "/stall") return;
      res.writeHead(404).end();
    });
    const listening = await listenLocal(server);
    port = new URL(listening.baseUrl).port;
    stop = listening.stop;
  });
  afterAll(() => stop());

  // Both made-up names lead to the local server; only the ones named in localHosts may be loopback.
  const resolve = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
  const options = (more: Partial<SafeFetchOptions> = {}) => ({ accept: "text/plain", allowInsecure: false, allowHttp: true, timeoutMs: 2000, maxBytes: 1024, resolve, localHosts: ["pages.test"], ...more });
  const at = (path: string, host = "pages.test") => `http://${host}:${port}${path}`;

  it("reaches a named local host, and says where the body came from after redirects", async () => {
    const page = await fetchBytes(at("/moved"), options({ userAgent: "Switchyard test" }));
    expect(page.body.toString()).toBe("agent Switchyard test");
    expect(page).toMatchObject({ url: at("/page"), contentType: "text/plain", truncated: false });
  });

  it("vets every other host as usual: an unnamed host, a literal loopback or private address, before or after a redirect", async () => {
    paths.length = 0;
    await expect(fetchBytes(at("/page", "other.test"), options())).rejects.toThrow(/other\.test: it resolves to 127\.0\.0\.1, a loopback address/);
    await expect(fetchBytes(`http://127.0.0.1:${port}/page`, options({ localHosts: ["127.0.0.1"] }))).rejects.toBeInstanceOf(FetchRefused);
    await expect(fetchBytes(at("/elsewhere"), options())).rejects.toThrow(/other\.test/);
    await expect(fetchBytes(at("/to-loopback"), options())).rejects.toThrow(/127\.0\.0\.1, a loopback address/);
    await expect(fetchBytes(at("/to-private"), options())).rejects.toThrow(/10\.0\.0\.8, a private address/);
    // The redirects were asked for; nothing behind them was.
    expect(paths).toEqual(["/elsewhere", "/to-loopback", "/to-private"]);
  });

  it("checks every hop with checkUrl before connecting to it", async () => {
    paths.length = 0;
    const seen: string[] = [];
    const checkUrl = (url: URL) => {
      seen.push(url.pathname);
      if (url.pathname === "/page") throw new FetchRefused("not that one");
    };
    await expect(fetchBytes(at("/moved"), options({ checkUrl }))).rejects.toThrow("not that one");
    expect(seen).toEqual(["/moved", "/page"]);
    expect(paths).toEqual(["/moved"]);
  });

  it("cuts a long body at maxBytes with truncate, declared or not, and refuses it without", async () => {
    for (const path of ["/big", "/stream"]) {
      const page = await fetchBytes(at(path), options({ truncate: true }));
      expect(page.body.length).toBe(1024);
      expect(page.truncated).toBe(true);
      await expect(fetchBytes(at(path), options())).rejects.toThrow(/over the 1024 byte limit/);
    }
  });

  it("tells the status of an answer that was not 200", async () => {
    const failure = await fetchBytes(at("/gone"), options()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(FetchFailed);
    expect((failure as FetchFailed).status).toBe(410);
  });

  it("ends when the caller's signal aborts, as on the timeout", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    await expect(fetchBytes(at("/stall"), options({ signal: controller.signal }))).rejects.toThrow(/cancelled/);
    await expect(fetchBytes(at("/stall"), options({ timeoutMs: 200 }))).rejects.toThrow(/timed out/);
    await expect(fetchBytes(at("/page"), options({ signal: AbortSignal.abort() }))).rejects.toThrow(/cancelled/);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
