import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenLocal } from "../../../tests/support/listen.js";
import { classifyAddress, FetchFailed, fetchJson, FetchRefused, vetUrl, type SafeFetchOptions } from "./safe-fetch.js";

describe("address classification", () => {
  const table: Array<[string, "public" | "local" | "forbidden"]> = [
    ["8.8.8.8", "public"],
    ["11.0.0.1", "public"],
    ["100.63.255.255", "public"],
    ["100.128.0.0", "public"],
    ["126.255.255.255", "public"],
    ["169.253.255.255", "public"],
    ["172.15.255.255", "public"],
    ["172.32.0.1", "public"],
    ["192.167.255.255", "public"],
    ["223.255.255.255", "public"],
    ["2606:4700:4700::1111", "public"],
    ["::ffff:8.8.8.8", "public"],
    ["64:ff9b::808:808", "public"],
    ["127.0.0.1", "local"],
    ["127.255.255.254", "local"],
    ["10.0.0.1", "local"],
    ["10.255.255.255", "local"],
    ["172.16.0.1", "local"],
    ["172.31.255.255", "local"],
    ["192.168.1.1", "local"],
    ["::1", "local"],
    ["0:0:0:0:0:0:0:1", "local"],
    ["fc00::1", "local"],
    ["fd12:3456:789a::1", "local"],
    ["::ffff:127.0.0.1", "local"],
    ["::ffff:7f00:1", "local"],
    ["::FFFF:10.0.0.1", "local"],
    ["2002:c0a8:0101::1", "local"],
    ["0.0.0.0", "forbidden"],
    ["0.1.2.3", "forbidden"],
    ["169.254.169.254", "forbidden"],
    ["169.254.0.1", "forbidden"],
    ["100.64.0.1", "forbidden"],
    ["100.127.255.255", "forbidden"],
    ["224.0.0.1", "forbidden"],
    ["239.255.255.250", "forbidden"],
    ["240.0.0.1", "forbidden"],
    ["255.255.255.255", "forbidden"],
    ["::", "forbidden"],
    ["fe80::1", "forbidden"],
    ["febf:ffff::1", "forbidden"],
    ["fec0::1", "forbidden"],
    ["ff02::1", "forbidden"],
    ["::ffff:169.254.169.254", "forbidden"],
    ["::ffff:a9fe:a9fe", "forbidden"],
    ["::ffff:0.0.0.0", "forbidden"],
    ["::ffff:100.64.0.1", "forbidden"],
    ["::ffff:255.255.255.255", "forbidden"],
    ["64:ff9b::a9fe:a9fe", "forbidden"],
    ["2002:a9fe:a9fe::1", "forbidden"],
    ["::169.254.169.254", "forbidden"],
    ["::127.0.0.1", "forbidden"],
    ["metadata.google.internal", "forbidden"],
    ["", "forbidden"],
  ];
  it.each(table)("%s is %s", (address, expected) => {
    expect(classifyAddress(address).cls).toBe(expected);
  });
});

describe("URL vetting", () => {
  const answers = (...addresses: string[]) => async (): Promise<LookupAddress[]> => addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it.each([
    "https://127.0.0.1/",
    "https://10.0.0.5/jwks",
    "https://[::1]/",
    "https://[::ffff:127.0.0.1]/",
    "https://[fd00::5]:8443/keys",
    "https://0x7f.1/",
    "https://2130706433/",
    "https://0177.0.0.1/",
  ])("refuses the literal private host in %s unless insecure issuers are allowed", async (href) => {
    await expect(vetUrl(new URL(href), false)).rejects.toBeInstanceOf(FetchRefused);
    await expect(vetUrl(new URL(href), true)).resolves.toMatchObject({ address: expect.any(String) });
  });

  it.each(["https://169.254.169.254/latest/meta-data/", "https://[::ffff:169.254.169.254]/", "https://[fe80::1]/", "https://0.0.0.0/", "https://100.100.100.200/", "https://[ff02::1]/"])(
    "refuses %s even when insecure issuers are allowed",
    async (href) => {
      await expect(vetUrl(new URL(href), true)).rejects.toBeInstanceOf(FetchRefused);
    },
  );

  it("refuses schemes other than https, and http unless insecure issuers are allowed", async () => {
    await expect(vetUrl(new URL("http://8.8.8.8/"), false)).rejects.toThrow(/only https/);
    await expect(vetUrl(new URL("http://8.8.8.8/"), true)).resolves.toEqual({ address: "8.8.8.8", family: 4 });
    for (const href of ["ftp://8.8.8.8/", "file:///etc/passwd", "data:application/json,{}", "ws://8.8.8.8/"]) {
      await expect(vetUrl(new URL(href), true)).rejects.toBeInstanceOf(FetchRefused);
    }
  });

  it("refuses a host when any of its answers is private, and returns the vetted answer otherwise", async () => {
    const url = new URL("https://issuer.example/.well-known/openid-configuration");
    await expect(vetUrl(url, false, answers("93.184.215.14", "10.0.0.7"))).rejects.toThrow(/10\.0\.0\.7, a private address/);
    await expect(vetUrl(url, false, answers("2606:2800:21f:cb07:6820:80da:af6b:8b2c", "::ffff:169.254.169.254"))).rejects.toThrow(/link-local/);
    await expect(vetUrl(url, true, answers("93.184.215.14", "169.254.169.254"))).rejects.toBeInstanceOf(FetchRefused);
    await expect(vetUrl(url, false, answers("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"))).resolves.toEqual({ address: "93.184.215.14", family: 4 });
  });

  it("reports resolution failures as failures, not refusals", async () => {
    const url = new URL("https://issuer.example/");
    const failing = async (): Promise<LookupAddress[]> => {
      throw new Error("getaddrinfo ENOTFOUND issuer.example");
    };
    const result = vetUrl(url, false, failing);
    await expect(result).rejects.toBeInstanceOf(FetchFailed);
    await expect(result).rejects.not.toBeInstanceOf(FetchRefused);
    await expect(vetUrl(url, false, answers())).rejects.toThrow(/no addresses/);
  });

  it("resolves names with the system resolver, so localhost is refused", async () => {
    await expect(vetUrl(new URL("https://localhost/"), false)).rejects.toBeInstanceOf(FetchRefused);
  });

  it("refuses a redirect target at a private address when insecure issuers are not allowed", async () => {
    // What fetchJson does with a Location header: resolve it against the current URL and vet it again.
    const target = new URL("https://10.1.2.3/jwks", "https://issuer.example/.well-known/openid-configuration");
    await expect(vetUrl(target, false)).rejects.toThrow(/private address/);
  });
});

describe("fetching", () => {
  let baseUrl = "";
  let stop: () => Promise<void>;
  const hosts: Array<string | undefined> = [];
  const timers = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    const server = createServer((req, res) => {
      hosts.push(req.headers.host);
      const path = req.url ?? "";
      const hop = /^\/hop\/(\d+)$/.exec(path);
      if (hop) {
        const left = Number(hop[1]);
        return void res.writeHead(302, { location: left === 0 ? "/doc" : `/hop/${left - 1}` }).end();
      }
      if (path === "/doc") return void res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      if (path === "/to-metadata") return void res.writeHead(307, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      if (path === "/to-nowhere") return void res.writeHead(302, { location: "http://[" }).end();
      if (path === "/html") return void res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
      if (path === "/missing") return void res.writeHead(404).end("{}");
      if (path === "/big") return void res.writeHead(200).end(JSON.stringify({ pad: "x".repeat(2000) }));
      if (path === "/stall") return;
      if (path === "/drip") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"pad":"');
        const timer = setInterval(() => res.write("x"), 50);
        timers.add(timer);
        res.on("close", () => clearInterval(timer));
        return;
      }
      res.writeHead(404).end();
    });
    ({ baseUrl, stop } = await listenLocal(server));
    baseUrl = new URL(baseUrl).origin;
  });

  afterAll(async () => {
    for (const timer of timers) clearInterval(timer);
    await stop();
  });

  const options = (more: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({ allowInsecure: true, timeoutMs: 2000, maxBytes: 1024, ...more });

  it("fetches JSON, following up to three redirects", async () => {
    await expect(fetchJson(`${baseUrl}/doc`, options())).resolves.toEqual({ ok: true });
    await expect(fetchJson(`${baseUrl}/hop/2`, options())).resolves.toEqual({ ok: true });
    await expect(fetchJson(`${baseUrl}/hop/3`, options())).rejects.toThrow(/redirected more than 3 times/);
  });

  it("connects to the vetted address, keeping the hostname for Host, resolving once per hop", async () => {
    const port = new URL(baseUrl).port;
    let lookups = 0;
    const resolve = async (host: string): Promise<LookupAddress[]> => {
      lookups++;
      // A rebinding resolver: the second answer for the same name would be the metadata address.
      return [{ address: lookups === 1 && host === "issuer.test" ? "127.0.0.1" : "169.254.169.254", family: 4 }];
    };
    hosts.length = 0;
    await expect(fetchJson(`http://issuer.test:${port}/doc`, options({ resolve }))).resolves.toEqual({ ok: true });
    expect(lookups).toBe(1);
    expect(hosts).toEqual([`issuer.test:${port}`]);
  });

  it("speaks TLS to the vetted address with the hostname as SNI", async () => {
    // A bare TCP listener sees the ClientHello; it cannot finish the handshake, so the fetch itself fails.
    const hellos: Buffer[] = [];
    const tls = createTcpServer((socket) => socket.once("data", (chunk: Buffer) => (hellos.push(chunk), socket.destroy())));
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
    const port = (tls.address() as AddressInfo).port;
    try {
      const resolve = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
      await expect(fetchJson(`https://issuer.test:${port}/doc`, options({ resolve }))).rejects.toBeInstanceOf(FetchFailed);
      expect(hellos).toHaveLength(1);
      expect(hellos[0]![0]).toBe(0x16); // a TLS handshake record
      expect(hellos[0]!.includes("issuer.test")).toBe(true);
    } finally {
      await new Promise((resolve) => tls.close(resolve));
    }
  });

  it("re-vets every redirect target", async () => {
    hosts.length = 0;
    await expect(fetchJson(`${baseUrl}/to-metadata`, options())).rejects.toThrow(/169\.254\.169\.254, a link-local address/);
    expect(hosts).toHaveLength(1);
    await expect(fetchJson(`${baseUrl}/to-nowhere`, options())).rejects.toThrow(/invalid location/);
  });

  it("refuses http when insecure issuers are not allowed, before connecting", async () => {
    hosts.length = 0;
    await expect(fetchJson(`${baseUrl}/doc`, options({ allowInsecure: false }))).rejects.toBeInstanceOf(FetchRefused);
    await expect(fetchJson("not a url", options())).rejects.toBeInstanceOf(FetchRefused);
    expect(hosts).toHaveLength(0);
  });

  it("fails on non-200 answers and bodies that are not JSON", async () => {
    await expect(fetchJson(`${baseUrl}/missing`, options())).rejects.toThrow(/answered 404/);
    await expect(fetchJson(`${baseUrl}/html`, options())).rejects.toThrow(/did not answer with JSON/);
  });

  it("caps the body", async () => {
    await expect(fetchJson(`${baseUrl}/big`, options())).rejects.toThrow(/over the 1024 byte limit/);
    await expect(fetchJson(`${baseUrl}/big`, options({ maxBytes: 4096 }))).resolves.toMatchObject({ pad: expect.any(String) });
  });

  it("gives up after the overall timeout, even on a body that keeps trickling in", async () => {
    const started = Date.now();
    await expect(fetchJson(`${baseUrl}/stall`, options({ timeoutMs: 300 }))).rejects.toThrow(/timed out/);
    await expect(fetchJson(`${baseUrl}/drip`, options({ timeoutMs: 300, maxBytes: 1_000_000 }))).rejects.toThrow(/timed out/);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
