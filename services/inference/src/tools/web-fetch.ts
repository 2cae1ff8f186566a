import { badRequest } from "@switchyard/runtime";
import { FetchFailed, FetchRefused, fetchBytes, type Resolve } from "@switchyard/upstream";
import { htmlToText } from "./html-text.js";
import { domains, onDomain, pick } from "./web-search-config.js";
import { record } from "../json.js";

type Json = Record<string, unknown>;

/** How the gateway fetches pages for `openrouter:web_fetch`; the operator sets the bounds (WEB_FETCH_*). */
export interface WebFetchOptions {
  /** One deadline for a fetch: resolution, redirects and body. */
  timeoutMs: number;
  /** Most bytes read of a body; the rest of a longer one is not read. */
  maxBytes: number;
  /**
   * Tests only, never read from the environment: a resolver pointing made-up host names at local servers,
   * and those names, whose loopback answers are then let through. Every other address is vetted.
   */
  resolve?: Resolve;
  localHosts?: readonly string[];
}

/** A page as the model reads it. */
export interface FetchedPage {
  /** The URL the page came from, after redirects. */
  url: string;
  title?: string;
  status: number;
  content_type: string;
  content: string;
  /** The text was cut at the character bound, or the body at the byte bound. */
  truncated?: true;
}

/** Most fetches of one request, whatever `max_uses` asks: OpenRouter's hard limit for direct fetches. */
export const maxFetchesPerRequest = 50;
/** The text a fetch returns when `max_content_tokens` is not set. */
export const defaultMaxCharacters = 20_000;
/** `max_content_tokens` is in approximate tokens: about four characters each. */
const charactersPerToken = 4;
const redirects = 5;
const accept = "text/html, application/xhtml+xml, text/markdown, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1";
const userAgent = "Mozilla/5.0 (compatible; Switchyard web fetch)";


/** The settings of a web fetch tool, OpenRouter's: in `parameters` or at the tool's top level. */
const settings = ["engine", "max_uses", "max_content_tokens", "allowed_domains", "blocked_domains"] as const;
/** Keys of the tool itself: `name` and `cache_control` come with tools declared on `/messages`. */
const identity = new Set(["type", "parameters", "name", "cache_control"]);
const settingsList = `${settings.slice(0, -1).join(", ")} and ${settings.at(-1)}`;

/** One place's settings checked: every key known, each value one this gateway can honour; domains normalized. */
function placeSettings(source: Json, where: string, known: (key: string) => boolean): Json {
  for (const key of Object.keys(source)) {
    if (!known(key)) throw badRequest(`Invalid body: ${where}.${key}: unknown field; openrouter:web_fetch takes ${settingsList}`);
  }
  const config: Json = {};
  const engine = source.engine;
  if (engine !== undefined && engine !== null) {
    if (engine !== "auto" && engine !== "openrouter") throw badRequest(`Invalid body: ${where}.engine: this gateway fetches pages itself; only "auto" and "openrouter" are supported`);
    config.engine = engine;
  }
  for (const field of ["max_uses", "max_content_tokens"]) {
    const value = source[field];
    if (value === undefined || value === null) continue;
    if (!(Number.isInteger(value) && (value as number) >= 1)) throw badRequest(`Invalid body: ${where}.${field}: must be a positive integer`);
    config[field] = value;
  }
  for (const field of ["allowed_domains", "blocked_domains"]) {
    const list = domains(source[field], `${where}.${field}`);
    if (list) config[field] = list;
  }
  return config;
}

/**
 * A web fetch tool's settings, from its `parameters` (as `@openrouter/sdk` sends them) and its top level,
 * where clients also write them, as for web search. A setting given in both places must agree; a key that
 * is no setting is refused rather than ignored. This gateway fetches pages itself, as OpenRouter's
 * `openrouter` engine does; an engine that would fetch elsewhere is refused.
 */
export function webFetchConfig(tool: Json, where: string): Json {
  if (tool.parameters !== undefined && tool.parameters !== null && (typeof tool.parameters !== "object" || Array.isArray(tool.parameters))) {
    throw badRequest(`Invalid body: ${where}.parameters: must be an object`);
  }
  const inParameters = placeSettings(record(tool.parameters), `${where}.parameters`, (key) => (settings as readonly string[]).includes(key));
  const atTop = placeSettings(tool, where, (key) => identity.has(key) || (settings as readonly string[]).includes(key));
  const config: Json = {};
  for (const field of settings) {
    const value = pick([[`${where}.parameters`, inParameters[field]], [where, atTop[field]]], where, field);
    if (value !== undefined && field !== "engine") config[field] = value;
  }
  return config;
}

/** The host a URL names, as domain lists are matched against it. */
const hostOf = (url: URL): string => url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");

/** Refuses a URL (the first or a redirect's) that the tool's domain lists keep out. */
export function domainCheck(config: Json): (url: URL) => void {
  const allowed = config.allowed_domains as string[] | undefined;
  const blocked = (config.blocked_domains as string[] | undefined) ?? [];
  return (url) => {
    const host = hostOf(url);
    if (allowed && !onDomain(host, allowed)) throw new FetchRefused(`refusing ${host}: it is not in allowed_domains`);
    if (onDomain(host, blocked)) throw new FetchRefused(`refusing ${host}: it is in blocked_domains`);
  };
}

/** How a body is read: as a page, as text, or not at all. */
function readableAs(mediaType: string, body: Buffer): "html" | "text" | undefined {
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") return "html";
  if (mediaType.startsWith("text/")) return "text";
  if (/^application\/(?:json|xml|javascript|ecmascript|x-ndjson|yaml|x-yaml|toml|[\w.-]+\+(?:json|xml))$/.test(mediaType)) return "text";
  if (mediaType !== "" && mediaType !== "application/octet-stream") return undefined;
  // Unlabelled: text if its start holds no NUL byte, a page if it starts like one.
  const head = body.subarray(0, 1024);
  if (head.includes(0)) return undefined;
  return /^\s*<(?:!doctype html|html)\b/i.test(head.toString("latin1")) ? "html" : "text";
}

/** What windows-1252 (also meant by latin1 and ascii labels) has at 0x80 to 0x9f, where Latin-1 has controls. */
const windows1252 = "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ";

/** The body's text in the charset its content type, or else a page's `<meta>`, names; UTF-8 otherwise. */
function decode(body: Buffer, contentType: string, html: boolean): string {
  let label = /charset\s*=\s*["']?([\w.:-]+)/i.exec(contentType)?.[1];
  if (!label && html) label = /<meta\b[^>]*charset\s*=\s*["']?([\w.:-]+)/i.exec(body.toString("latin1", 0, 4096))?.[1];
  const decoder = (() => {
    try {
      return new TextDecoder(label ?? "utf-8");
    } catch {
      return new TextDecoder("utf-8");
    }
  })();
  // Decoded by hand: some Node versions' decoder drops the bytes 0x80 to 0x9f of this one.
  if (decoder.encoding === "windows-1252") return body.toString("latin1").replace(/[\u0080-\u009f]/g, (c) => windows1252[c.charCodeAt(0) - 0x80]!);
  return decoder.decode(body);
}

/** The first `max` characters, never half a surrogate pair. */
function cut(text: string, max: number): string {
  const end = max > 0 && /[\uD800-\uDBFF]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * GETs a page from a public address (every redirect vetted again and checked against `checkUrl`; the body
 * read up to the byte bound; one deadline for all) and returns its readable text: an HTML page reduced to
 * what a reader sees, with its title; text, markdown, JSON or XML as it is. Other content is refused.
 */
export async function fetchPage(href: string, options: WebFetchOptions, limits: { maxCharacters: number; checkUrl?: (url: URL) => void; signal?: AbortSignal }): Promise<FetchedPage> {
  const fetched = await fetchBytes(href, {
    accept,
    userAgent,
    allowInsecure: false,
    allowHttp: true,
    timeoutMs: options.timeoutMs,
    maxBytes: options.maxBytes,
    maxRedirects: redirects,
    truncate: true,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.localHosts ? { localHosts: options.localHosts } : {}),
    ...(limits.checkUrl ? { checkUrl: limits.checkUrl } : {}),
    ...(limits.signal ? { signal: limits.signal } : {}),
  });
  const contentType = fetched.contentType ?? "";
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  const kind = readableAs(mediaType, fetched.body);
  if (!kind) throw new FetchFailed(`${fetched.url} is ${mediaType || "binary content"}, which web fetch does not read; it reads HTML pages and text (plain, markdown, JSON, XML)`);
  const decoded = decode(fetched.body, contentType, kind === "html");
  const { title, text } = kind === "html" ? htmlToText(decoded) : { title: undefined, text: decoded };
  const content = cut(text, limits.maxCharacters);
  return {
    url: fetched.url,
    ...(title ? { title } : {}),
    status: 200,
    content_type: mediaType || (kind === "html" ? "text/html" : "text/plain"),
    content,
    ...(content.length < text.length || fetched.truncated ? { truncated: true as const } : {}),
  };
}

/** What a run needs: the operator's bounds (undefined: the tool is off) and this request's count of fetches. */
export interface FetchContext {
  webFetch: WebFetchOptions | undefined;
  fetches: { uses: number };
  signal: AbortSignal;
}

/** Runs one call of the web fetch tool; what it throws is the error the model reads. */
export async function webFetch(args: Json, config: Json, context: FetchContext): Promise<FetchedPage> {
  const href = typeof args.url === "string" ? args.url.trim() : "";
  if (!href) throw new Error("url must be a non-empty string");
  if (!URL.canParse(href)) throw new Error(`${href} is not a URL`);
  const url = new URL(href);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new Error("URLs with credentials are not fetched");
  url.hash = "";
  if (!context.webFetch) throw new Error("web fetch is turned off on this gateway");
  const limit = Math.min(Number.isInteger(config.max_uses) ? (config.max_uses as number) : maxFetchesPerRequest, maxFetchesPerRequest);
  if (context.fetches.uses >= limit) throw new Error(`the limit of ${limit} fetches for this request is reached`);
  context.fetches.uses += 1;
  const tokens = config.max_content_tokens;
  const maxCharacters = Number.isInteger(tokens) ? (tokens as number) * charactersPerToken : defaultMaxCharacters;
  return fetchPage(url.href, context.webFetch, { maxCharacters, checkUrl: domainCheck(config), signal: context.signal });
}
