import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../../tests/support/listen.js";
import { fetchPage, webFetch, webFetchConfig, type FetchContext, type WebFetchOptions } from "./web-fetch.js";

let port = "";
let stop: () => Promise<void>;
const served: string[] = [];

const page = `<html><head><title>Release notes</title><script>track()</script></head>
<body><h1>Switchyard 1.2</h1><p>Adds the <em>web fetch</em> tool.</p></body></html>`;

beforeAll(async () => {
  const server = createServer((req, res) => {
    const path = req.url ?? "";
    served.push(path);
    const send = (type: string, body: string | Buffer) => void res.writeHead(200, { "content-type": type }).end(body);
    if (path === "/notes") return send("text/html; charset=utf-8", page);
    if (path === "/plain") return send("text/plain", "  line one\n\n\n  line two  ");
    if (path === "/data.json") return send("application/json", '{"a": [1, 2]}');
    if (path === "/latin1") return send("text/html; charset=iso-8859-1", Buffer.from("<p>caf\u00e9</p>", "latin1"));
    if (path === "/meta-charset") return send("text/html", Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>'), Buffer.from([0x93, 0x71, 0x94]), Buffer.from("</p>")]));
    if (path === "/unlabelled") return void res.writeHead(200).end("<!doctype html><title>Bare</title><p>hi</p>");
    if (path === "/image") return send("image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    if (path === "/long") return send("text/plain", "x".repeat(50_000));
    if (path === "/wordy") return send("text/html", `<p>${"word ".repeat(3000)}</p>`);
    if (path === "/moved") return void res.writeHead(301, { location: "/notes" }).end();
    if (path === "/to-loopback") return void res.writeHead(302, { location: `http://127.0.0.1:${port}/notes` }).end();
    if (path === "/to-private") return void res.writeHead(302, { location: "http://192.168.1.1/admin" }).end();
    if (path === "/to-metadata") return void res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
    if (path === "/to-blocked") return void res.writeHead(302, { location: `http://private.pages.test:${port}/notes` }).end();
    if (path === "/missing") return void res.writeHead(404).end("not here");
    if (path === "/stall") return;
    res.writeHead(404).end();
  });
  const listening = await listenLocal(server);
  port = new URL(listening.baseUrl).port;
  stop = listening.stop;
});
afterAll(() => stop());

// The made-up names of the local server; only they may resolve to loopback.
const resolve = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
const options: WebFetchOptions = { timeoutMs: 2000, maxBytes: 20_000, resolve, localHosts: ["pages.test", "private.pages.test"] };
const at = (path: string, host = "pages.test") => `http://${host}:${port}${path}`;
const fetchOf = (path: string, more: Partial<WebFetchOptions> = {}, maxCharacters = 20_000) => fetchPage(at(path), { ...options, ...more }, { maxCharacters });

describe("fetchPage", () => {
  it("reduces an HTML page to its title and text, after redirects", async () => {
    await expect(fetchOf("/moved")).resolves.toEqual({
      url: at("/notes"),
      title: "Release notes",
      status: 200,
      content_type: "text/html",
      content: "Switchyard 1.2\n\nAdds the web fetch tool.",
    });
  });

  it("returns text and JSON as they are, and reads unlabelled content by its look", async () => {
    await expect(fetchOf("/plain")).resolves.toMatchObject({ content: "  line one\n\n\n  line two  ", content_type: "text/plain" });
    await expect(fetchOf("/data.json")).resolves.toMatchObject({ content: '{"a": [1, 2]}', content_type: "application/json" });
    await expect(fetchOf("/unlabelled")).resolves.toMatchObject({ title: "Bare", content: "hi", content_type: "text/html" });
  });

  it("decodes the charset the content type or the page names", async () => {
    await expect(fetchOf("/latin1")).resolves.toMatchObject({ content: "café" });
    await expect(fetchOf("/meta-charset")).resolves.toMatchObject({ content: "\u201cq\u201d" });
  });

  it("refuses content that is not text", async () => {
    await expect(fetchOf("/image")).rejects.toThrow(/image\/png, which web fetch does not read/);
  });

  it("cuts the text at the character bound and the body at the byte bound", async () => {
    const cut = await fetchOf("/wordy", {}, 100);
    expect(cut.content).toHaveLength(100);
    expect(cut.truncated).toBe(true);
    const long = await fetchOf("/long", { maxBytes: 4096 });
    expect(long.content).toHaveLength(4096);
    expect(long.truncated).toBe(true);
    expect((await fetchOf("/notes")).truncated).toBeUndefined();
  });

  it("refuses a redirect to a loopback, private or metadata address, before connecting", async () => {
    served.length = 0;
    await expect(fetchOf("/to-loopback")).rejects.toThrow(/127\.0\.0\.1, a loopback address/);
    await expect(fetchOf("/to-private")).rejects.toThrow(/192\.168\.1\.1, a private address/);
    await expect(fetchOf("/to-metadata")).rejects.toThrow(/169\.254\.169\.254, a link-local address/);
    expect(served).toEqual(["/to-loopback", "/to-private", "/to-metadata"]);
  });

  it("refuses a host not named for tests, resolved to loopback", async () => {
    await expect(fetchPage(at("/notes", "elsewhere.test"), options, { maxCharacters: 100 })).rejects.toThrow(/loopback address/);
    await expect(fetchPage(`http://localhost:${port}/notes`, { timeoutMs: 2000, maxBytes: 1000 }, { maxCharacters: 100 })).rejects.toThrow(/loopback address/);
  });

  it("gives up at the time bound", async () => {
    const started = Date.now();
    await expect(fetchOf("/stall", { timeoutMs: 300 })).rejects.toThrow(/timed out/);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe("webFetchConfig", () => {
  const config = (parameters: Record<string, unknown>) => webFetchConfig({ type: "openrouter:web_fetch", parameters }, "tools.0");

  it("takes OpenRouter's settings, domains normalized", () => {
    expect(config({})).toEqual({});
    expect(config({ engine: "openrouter", max_uses: 3, max_content_tokens: 500, allowed_domains: ["https://Docs.Example.com/x"], blocked_domains: ["*.private.example.com"] })).toEqual({
      max_uses: 3,
      max_content_tokens: 500,
      allowed_domains: ["docs.example.com"],
      blocked_domains: ["private.example.com"],
    });
  });

  it("reads the top level too, where a setting given twice must agree once normalized", () => {
    const tool = { type: "openrouter:web_fetch", max_uses: 2, allowed_domains: ["https://A.example/"], cache_control: { type: "ephemeral" }, parameters: { allowed_domains: ["a.example"] } };
    expect(webFetchConfig(tool, "tools.0")).toEqual({ max_uses: 2, allowed_domains: ["a.example"] });
    expect(() => webFetchConfig({ ...tool, parameters: { max_uses: 3 } }, "tools.0")).toThrow("tools.0: max_uses is given in tools.0.parameters and in tools.0 with different values");
    expect(() => webFetchConfig({ type: "openrouter:web_fetch", parameters: ["max_uses"] }, "tools.0")).toThrow("tools.0.parameters: must be an object");
  });

  it.each([
    [{ engine: "exa" }, /engine: this gateway fetches pages itself/],
    [{ engine: "native" }, /engine/],
    [{ max_uses: 0 }, /max_uses: must be a positive integer/],
    [{ max_content_tokens: 1.5 }, /max_content_tokens/],
    [{ allowed_domains: "example.com" }, /allowed_domains: must be an array/],
    [{ blocked_domains: [""] }, /blocked_domains/],
  ])("refuses %j", (parameters, message) => {
    expect(() => config(parameters)).toThrow(message);
  });
});

describe("webFetch", () => {
  const context = (more: Partial<FetchContext> = {}): FetchContext => ({ webFetch: options, fetches: { uses: 0 }, signal: new AbortController().signal, ...more });

  it("counts fetches against max_uses, and never more than 50", async () => {
    const ctx = context();
    await expect(webFetch({ url: at("/plain") }, { max_uses: 1 }, ctx)).resolves.toMatchObject({ status: 200 });
    await expect(webFetch({ url: at("/plain") }, { max_uses: 1 }, ctx)).rejects.toThrow("the limit of 1 fetches for this request is reached");
    await expect(webFetch({ url: at("/plain") }, { max_uses: 500 }, context({ fetches: { uses: 50 } }))).rejects.toThrow("the limit of 50 fetches");
  });

  it("applies max_content_tokens at about four characters a token", async () => {
    const page = await webFetch({ url: at("/long") }, { max_content_tokens: 10 }, context());
    expect(page.content).toHaveLength(40);
  });

  it("keeps out hosts of blocked_domains and outside allowed_domains, redirects included", async () => {
    await expect(webFetch({ url: at("/notes") }, { allowed_domains: ["example.com"] }, context())).rejects.toThrow(/pages\.test: it is not in allowed_domains/);
    await expect(webFetch({ url: at("/notes") }, { allowed_domains: ["pages.test"] }, context())).resolves.toMatchObject({ title: "Release notes" });
    served.length = 0;
    await expect(webFetch({ url: at("/to-blocked") }, { allowed_domains: ["pages.test"], blocked_domains: ["private.pages.test"] }, context())).rejects.toThrow(/private\.pages\.test: it is in blocked_domains/);
    expect(served).toEqual(["/to-blocked"]);
  });

  it.each([
    [{}, /url must be a non-empty string/],
    [{ url: "not a url" }, /is not a URL/],
    [{ url: "file:///etc/passwd" }, /only http and https/],
    [{ url: "http://user:secret@pages.test/" }, /credentials/],
  ])("refuses the arguments %j without fetching or counting", async (args, message) => {
    const ctx = context();
    await expect(webFetch(args, {}, ctx)).rejects.toThrow(message);
    expect(ctx.fetches.uses).toBe(0);
  });

  it("fails a page that did not answer 200 with its status", async () => {
    await expect(webFetch({ url: at("/missing") }, {}, context())).rejects.toMatchObject({ status: 404, message: expect.stringMatching(/answered 404/) });
  });
});
