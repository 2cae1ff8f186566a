import { createServer, type IncomingMessage, type Server } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { directRunner } from "../runners/direct.js";

const runBody = z.object({
  command: z.string().min(1).max(16_384),
  limits: z.object({
    timeoutMs: z.number().int().min(100),
    memoryBytes: z.number().int().min(1),
    maxProcesses: z.number().int().min(1),
    outputBytes: z.number().int().min(1),
    fileBytes: z.number().int().min(1),
  }),
});

async function json(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) throw new Error("body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/**
 * The agent in a sandbox pod: it runs the commands the sandbox service sends for this one container, in
 * its home folder, and hands back the files there. It answers only the bearer of the pod's token.
 */
export function createAgentServer(home: string, token: string): Server {
  const runner = directRunner(home);
  // The pod is one container: its home is the runner's root, and its user is the pod's.
  const self = { id: "", uidSlot: 0 };
  const expected = Buffer.from(`Bearer ${token}`);
  const authorized = (req: IncomingMessage) => {
    const given = Buffer.from(req.headers.authorization ?? "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://agent");
    const reply = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const handle = async () => {
      if (url.pathname === "/healthz") return reply(200, { status: "ok" });
      if (!authorized(req)) return reply(401, { error: { code: 401, message: "Missing or wrong agent token" } });
      await runner.open(self);
      if (req.method === "POST" && url.pathname === "/run") {
        const body = runBody.safeParse(await json(req));
        if (!body.success) return reply(400, { error: { code: 400, message: "Invalid run body" } });
        // The sandbox service closes the request when its own caller went away: the command dies with it.
        const abandoned = new AbortController();
        res.on("close", () => {
          if (!res.writableFinished) abandoned.abort();
        });
        return reply(200, await runner.run(self, body.data.command, body.data.limits, abandoned.signal));
      }
      if (req.method === "GET" && url.pathname === "/files") {
        const max = Math.min(Number(url.searchParams.get("max") ?? 1000) || 1000, 100_000);
        const files = await runner.files("", max);
        return reply(200, { files: files.map((f) => ({ path: f.path, bytes: f.bytes, modified_at: f.modifiedAt.toISOString() })) });
      }
      if (req.method === "GET" && url.pathname === "/file") {
        const path = url.searchParams.get("path") ?? "";
        if (!path || path.startsWith("/") || path.split("/").includes("..")) return reply(400, { error: { code: 400, message: "Invalid path" } });
        const content = await runner.read("", path).catch(() => undefined);
        if (!content) return reply(404, { error: { code: 404, message: "No such file" } });
        return void res.writeHead(200, { "content-type": "application/octet-stream", "content-length": content.length }).end(content);
      }
      return reply(404, { error: { code: 404, message: "Not found" } });
    };
    handle().catch((error: unknown) => reply(500, { error: { code: 500, message: (error as Error).message } }));
  });
}
