import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, extname, join } from "node:path";
import type { Logger } from "@switchyard/runtime";

/**
 * The console's pages load only what the router serves beside them: no inline script or style, no other
 * origin, never inside a frame.
 */
export const consoleHeaders = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cache-Control": "no-cache",
} as const;

const types: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

interface ConsoleFile {
  body: Buffer;
  type: string;
  etag: string;
}

export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse, path: string) => void;

/** Where `npm run build` puts the console: the `dist` folder of the `@switchyard/console` package. */
export function consoleDistDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve("@switchyard/console/package.json")), "dist");
}

/**
 * Reads the built console into memory once (a few hundred KB) and serves it at `/console`. When it was never
 * built, `/console` says so with a 503 instead of the gateway refusing to start.
 */
export async function loadConsole(logger: Logger, dir = consoleDistDir()): Promise<ConsoleHandler> {
  const files = new Map<string, ConsoleFile>();
  try {
    for (const name of await readdir(dir)) {
      const type = types[extname(name)];
      if (!type) continue;
      const body = await readFile(join(dir, name));
      files.set(name, { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const index = files.get("index.html");
  if (!index) logger.error({ dir }, "the console is not built (run npm run build); /console answers 503 until it is");
  return (req, res, path) => {
    const send = (status: number, headers: Record<string, string>, body?: Buffer | string) => {
      res.writeHead(status, { ...consoleHeaders, ...headers });
      res.end(req.method === "HEAD" ? undefined : body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, { Allow: "GET, HEAD", "Content-Type": types[".txt"]! }, "Method not allowed\n");
    if (!index) return send(503, { "Content-Type": types[".txt"]! }, "The console is not built: run npm run build.\n");
    // Pages live in the URL's fragment, so every page is /console itself.
    const name = path === "/console" || path === "/console/" ? "index.html" : path.slice("/console/".length);
    const file = files.get(name);
    if (!file) return send(404, { "Content-Type": types[".txt"]! }, "Not found\n");
    if (req.headers["if-none-match"] === file.etag) return send(304, { ETag: file.etag });
    send(200, { "Content-Type": file.type, "Content-Length": String(file.body.length), ETag: file.etag }, file.body);
  };
}
