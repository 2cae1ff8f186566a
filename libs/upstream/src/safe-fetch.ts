import { promises as dns, type LookupAddress, type LookupOptions } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";

/** The fetch could not complete: network error, timeout, non-200, oversize or non-JSON body. */
export class FetchFailed extends Error {
  /** The HTTP status of an answer that was not 200, when that is why. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}
/** The URL or an address its host resolves to is not one we may connect to. */
export class FetchRefused extends FetchFailed {}

/** How an address may be used: anywhere, only when insecure issuers are allowed, or never. */
export type AddressClass = "public" | "local" | "forbidden";

export type Resolve = (host: string) => Promise<LookupAddress[]>;

export interface SafeFetchOptions {
  /** Lets http URLs and loopback or private addresses through (development against local servers). */
  allowInsecure: boolean;
  /** Lets plain http URLs through while addresses are still vetted (image references may be http). */
  allowHttp?: boolean;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects?: number;
  /** Tests point a made-up hostname at 127.0.0.1 with this; defaults to the system resolver. */
  resolve?: Resolve;
  /**
   * Host names whose loopback or private answers are let through, as `allowInsecure` lets every host's
   * (tests name the made-up hosts they resolve to local servers). Literal addresses, every other name, and
   * forbidden answers (link-local, metadata...) are vetted as usual.
   */
  localHosts?: readonly string[];
  /** Called with each URL before it is fetched, the first and every redirect's; what it throws ends the fetch. */
  checkUrl?: (url: URL) => void;
  /** A body over `maxBytes` is cut there and returned as `truncated`, instead of failing the fetch. */
  truncate?: boolean;
  /** Sent as `user-agent`; none by default. */
  userAgent?: string;
  /** An abort (the caller gone) ends the fetch as the timeout does. */
  signal?: AbortSignal;
}

/** A fetched document: its body, what it says it is, and the URL it came from after redirects. */
export interface FetchedBytes {
  body: Buffer;
  contentType: string | undefined;
  url: string;
  /** The body was over `maxBytes` and was cut (only with `truncate`). */
  truncated: boolean;
}

const systemResolve: Resolve = (host) => dns.lookup(host, { all: true, verbatim: true });

type Range = [base: number, bits: number, cls: AddressClass, what: string];

const ipv4Ranges: Range[] = [
  [v4("0.0.0.0"), 8, "forbidden", "unspecified"],
  [v4("10.0.0.0"), 8, "local", "private"],
  [v4("100.64.0.0"), 10, "forbidden", "carrier-grade NAT"],
  [v4("127.0.0.0"), 8, "local", "loopback"],
  [v4("169.254.0.0"), 16, "forbidden", "link-local"],
  [v4("172.16.0.0"), 12, "local", "private"],
  [v4("192.0.0.0"), 24, "forbidden", "reserved"],
  [v4("192.168.0.0"), 16, "local", "private"],
  [v4("198.18.0.0"), 15, "forbidden", "reserved"],
  [v4("224.0.0.0"), 4, "forbidden", "multicast"],
  [v4("240.0.0.0"), 4, "forbidden", "reserved or broadcast"],
];

function v4(address: string): number {
  const parts = address.split(".").map(Number);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function classifyV4(address: string): { cls: AddressClass; what: string } {
  const n = v4(address);
  for (const [base, bits, cls, what] of ipv4Ranges) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if (((n & mask) >>> 0) === base) return { cls, what };
  }
  return { cls: "public", what: "public" };
}

/** Eight 16-bit groups of a valid IPv6 address (zone id dropped, embedded dotted IPv4 expanded). */
function v6Groups(address: string): number[] {
  let text = address.split("%")[0]!.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4(dotted[1]!);
    text = text.slice(0, dotted.index) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const parse = (s: string) => (s === "" ? [] : s.split(":").map((g) => parseInt(g, 16)));
  const left = parse(head);
  if (tail === undefined) return left;
  const right = parse(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function embeddedV4(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

function classifyV6(address: string): { cls: AddressClass; what: string } {
  const g = v6Groups(address);
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return { cls: "forbidden", what: "unspecified" };
  if (zeroUpTo(7) && g[7] === 1) return { cls: "local", what: "loopback" };
  // Addresses that carry an IPv4 address are judged by it, so ::ffff:169.254.169.254 is the metadata address.
  if (zeroUpTo(5) && g[5] === 0xffff) return classifyV4(embeddedV4(g[6]!, g[7]!));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(embeddedV4(g[6]!, g[7]!));
  if (g[0] === 0x2002) return classifyV4(embeddedV4(g[1]!, g[2]!));
  const first = g[0]!;
  if (first >> 8 === 0) return { cls: "forbidden", what: "reserved (IPv4-compatible or unassigned)" };
  if ((first & 0xfe00) === 0xfc00) return { cls: "local", what: "unique-local" };
  if ((first & 0xffc0) === 0xfe80) return { cls: "forbidden", what: "link-local" };
  if ((first & 0xffc0) === 0xfec0) return { cls: "forbidden", what: "site-local" };
  if (first >> 8 === 0xff) return { cls: "forbidden", what: "multicast" };
  if (first === 0x100 && zeroUpTo(4)) return { cls: "forbidden", what: "discard" };
  if (first === 0x2001 && g[1] === 0xdb8) return { cls: "forbidden", what: "documentation" };
  return { cls: "public", what: "public" };
}

/** Classifies an IP address; anything that is not a valid IP literal is forbidden. */
export function classifyAddress(address: string): { cls: AddressClass; what: string } {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return classifyV4(address);
  if (family === 6) return classifyV6(address);
  return { cls: "forbidden", what: "not an IP address" };
}

function vetAddress(address: string, host: string, allowInsecure: boolean): void {
  const { cls, what } = classifyAddress(address);
  if (cls === "public" || (cls === "local" && allowInsecure)) return;
  throw new FetchRefused(`refusing ${host}: it resolves to ${address}, a ${what} address`);
}

/**
 * Checks the scheme, resolves the host and checks every answer, so a name with one public and one private
 * answer is refused. Returns the address to connect to; the caller must connect to exactly that one.
 */
export async function vetUrl(url: URL, allowInsecure: boolean, resolve: Resolve = systemResolve, allowHttp = false): Promise<LookupAddress> {
  if (url.protocol !== "https:" && !((allowInsecure || allowHttp) && url.protocol === "http:")) {
    throw new FetchRefused(`refusing ${url.protocol} URL ${url.origin}: only ${allowHttp ? "http and https are" : "https is"} allowed`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const literal = isIP(host);
  if (literal) {
    vetAddress(host, host, allowInsecure);
    return { address: host, family: literal };
  }
  let answers: LookupAddress[];
  try {
    answers = await resolve(host);
  } catch (error) {
    throw new FetchFailed(`cannot resolve ${host}: ${(error as Error).message}`);
  }
  if (answers.length === 0) throw new FetchFailed(`cannot resolve ${host}: no addresses`);
  for (const answer of answers) vetAddress(answer.address, host, allowInsecure);
  return answers[0]!;
}

function pinnedLookup(pinned: LookupAddress): LookupFunction {
  return (_host: string, options: LookupOptions, callback) => {
    if (options.all) callback(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
}

type Hop = { redirect: URL } | { body: Buffer; contentType: string | undefined; truncated: boolean };

function request(url: URL, pinned: LookupAddress, options: SafeFetchOptions & { accept: string }, signal: AbortSignal): Promise<Hop> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise<Hop>((resolve, reject) => {
    // agent: false keeps a pooled socket to some earlier address from being reused for this host.
    const headers = { accept: options.accept, ...(options.userAgent ? { "user-agent": options.userAgent } : {}) };
    const req = client.request(url, { method: "GET", headers, lookup: pinnedLookup(pinned), agent: false, signal });
    req.on("error", (error) => reject(signal.aborted ? new FetchFailed(`timed out fetching ${url.href}`) : new FetchFailed(`fetching ${url.href}: ${error.message}`)));
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      if ([301, 302, 303, 307, 308].includes(status) && res.headers.location) {
        res.destroy();
        try {
          resolve({ redirect: new URL(res.headers.location, url) });
        } catch {
          reject(new FetchFailed(`${url.href} redirected to an invalid location`));
        }
        return;
      }
      if (status !== 200) {
        res.destroy();
        return reject(new FetchFailed(`${url.href} answered ${status}`, status));
      }
      const contentType = res.headers["content-type"];
      const declared = Number(res.headers["content-length"]);
      if (declared > options.maxBytes && !options.truncate) {
        res.destroy();
        return reject(new FetchFailed(`${url.href} declares ${declared} bytes, over the ${options.maxBytes} byte limit`));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        // Past the limit the connection is being dropped; what still arrives is not read.
        if (size > options.maxBytes) return;
        size += chunk.length;
        if (size <= options.maxBytes) return void chunks.push(chunk);
        if (options.truncate) {
          // Settled before the connection is dropped, so the close below is not read as a failure.
          chunks.push(chunk.subarray(0, chunk.length - (size - options.maxBytes)));
          resolve({ body: Buffer.concat(chunks), contentType, truncated: true });
        } else reject(new FetchFailed(`${url.href} sent a body over the ${options.maxBytes} byte limit`));
        res.destroy();
      });
      res.on("error", (error) => reject(new FetchFailed(`reading ${url.href}: ${error.message}`)));
      res.on("close", () => {
        if (!res.complete) reject(new FetchFailed(`${url.href} closed the connection mid-body`));
      });
      res.on("end", () => {
        if (size <= options.maxBytes) resolve({ body: Buffer.concat(chunks), contentType, truncated: false });
      });
    });
    req.end();
  });
}

/**
 * GETs a document from a URL we do not control (an issuer's key set, a reference image). Every hop is
 * vetted and then connected to the vetted address only, so DNS rebinding between check and connect does
 * not work; one deadline covers resolution, redirects and the body.
 */
export async function fetchBytes(href: string, options: SafeFetchOptions & { accept: string }): Promise<FetchedBytes> {
  const maxRedirects = options.maxRedirects ?? 3;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const cancel = () => controller.abort();
  const timedOut = new Promise<never>((_, reject) =>
    controller.signal.addEventListener("abort", () => reject(new FetchFailed(options.signal?.aborted ? `fetching ${href} was cancelled` : `timed out fetching ${href}`)), { once: true }),
  );
  timedOut.catch(() => {});
  options.signal?.addEventListener("abort", cancel, { once: true });
  if (options.signal?.aborted) cancel();
  try {
    let url: URL;
    try {
      url = new URL(href);
    } catch {
      throw new FetchRefused(`not a URL: ${href}`);
    }
    for (let redirects = 0; ; redirects++) {
      options.checkUrl?.(url);
      const insecure = options.allowInsecure || (isIP(url.hostname) === 0 && (options.localHosts?.includes(url.hostname) ?? false));
      const pinned = await Promise.race([vetUrl(url, insecure, options.resolve, options.allowHttp), timedOut]);
      const hop = await Promise.race([request(url, pinned, options, controller.signal), timedOut]);
      if ("body" in hop) return { ...hop, url: url.href };
      if (redirects === maxRedirects) throw new FetchFailed(`${href} redirected more than ${maxRedirects} times`);
      url = hop.redirect;
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", cancel);
    controller.abort();
  }
}

/** GETs a JSON document (an issuer's discovery document or key set); see `fetchBytes`. */
export async function fetchJson(href: string, options: SafeFetchOptions): Promise<unknown> {
  const { body } = await fetchBytes(href, { ...options, accept: "application/json" });
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw new FetchFailed(`${href} did not answer with JSON`);
  }
}
