import { readFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { listenLocal } from "./listen.js";

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** What the fake does with one request. */
export type Answer =
  /** Replays a recorded file: JSON as is, `.sse` as an event stream (optionally cut after N events). */
  | { file: string; status?: number; headers?: Record<string, string>; cutAfterEvents?: number }
  | { stall: true }
  | { reset: true };

export interface ReplayProvider {
  baseUrl: string;
  requests: ReceivedRequest[];
  /** Requests whose client went away before the answer ended. */
  aborted: number;
  stop(): Promise<void>;
}

/**
 * A provider on 127.0.0.1 that answers with recorded bodies and SSE files from `dir`, in whatever wire
 * format they hold, and fails on demand: an error status with its headers, a stall, a reset connection,
 * or a stream cut after some events.
 */
export async function startReplayProvider(dir: string, answer: (request: ReceivedRequest) => Answer): Promise<ReplayProvider> {
  const fake: ReplayProvider = { baseUrl: "", requests: [], aborted: 0, stop: async () => {} };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const received = { path: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown> };
    fake.requests.push(received);
    res.on("close", () => {
      if (!res.writableFinished) fake.aborted++;
    });
    const plan = answer(received);
    if ("stall" in plan) return;
    if ("reset" in plan) return void req.socket.destroy();
    const content = await readFile(join(dir, plan.file), "utf8");
    const stream = plan.file.endsWith(".sse");
    res.writeHead(plan.status ?? 200, { "content-type": stream ? "text/event-stream" : "application/json", ...plan.headers });
    if (!stream) return void res.end(content);
    const events = content.split(/\n\n/).filter((e) => e.trim());
    for (const [i, e] of events.entries()) {
      if (plan.cutAfterEvents !== undefined && i === plan.cutAfterEvents) {
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.write(`${e}\n\n`);
    }
    res.end();
  });
  Object.assign(fake, await listenLocal(server));
  return fake;
}
