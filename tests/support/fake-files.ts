import { createServer, type IncomingMessage } from "node:http";
import { listenLocal } from "./listen.js";

interface StoredFile {
  id: string;
  filename: string;
  bytes: Buffer;
  type: string;
  created: number;
}

export interface FakeFilesProvider {
  baseUrl: string;
  /** The credential of every request, in order: `Bearer ...` (OpenAI) or the `x-api-key` (Anthropic). */
  credentials: string[];
  /** The text fields of every upload, in order. */
  forms: Array<Record<string, string>>;
  /** Bytes of `file-large`'s content written so far: it is written as its reader takes it. */
  largeSent: number;
  stop(): Promise<void>;
}

/** `file-large`, a file of each store that is never uploaded: its content is this many bytes, made as they are read. */
export const largeFileBytes = 64 * 1024 * 1024;

async function read(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * OpenAI's and Anthropic's Files APIs on 127.0.0.1, told apart by their auth headers; each keeps its own
 * files. Enough of each to upload, list with cursors, retrieve, download and delete.
 */
export async function startFakeFilesProvider(): Promise<FakeFilesProvider> {
  const stores = { openai: [] as StoredFile[], anthropic: [] as StoredFile[] };
  let next = 1;
  const fake: FakeFilesProvider = { baseUrl: "", credentials: [], forms: [], largeSent: 0, stop: async () => {} };
  const server = createServer(async (req, res) => {
    const anthropic = typeof req.headers["x-api-key"] === "string";
    fake.credentials.push(anthropic ? String(req.headers["x-api-key"]) : String(req.headers.authorization));
    const store = anthropic ? stores.anthropic : stores.openai;
    const url = new URL(req.url ?? "/", "http://fake");
    const id = /\/files\/([^/]+)/.exec(url.pathname)?.[1];
    const json = (status: number, body: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    const describe = (f: StoredFile) =>
      anthropic
        ? { id: f.id, type: "file", filename: f.filename, mime_type: f.type, size_bytes: f.bytes.length, created_at: new Date(f.created * 1000).toISOString(), downloadable: true }
        : { id: f.id, object: "file", bytes: f.bytes.length, created_at: f.created, filename: f.filename, purpose: "user_data", status: "processed" };
    const raw = await read(req);
    if (id === "file-large" && url.pathname.endsWith("/content")) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": largeFileBytes });
      const chunk = Buffer.alloc(64 * 1024, 120);
      const more = () => {
        while (fake.largeSent < largeFileBytes && !res.destroyed) {
          fake.largeSent += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", more);
        }
        res.end();
      };
      return more();
    }
    if (req.method === "POST") {
      const form = await new Request("http://fake/", { method: "POST", headers: { "content-type": String(req.headers["content-type"]) }, body: raw }).formData();
      fake.forms.push(Object.fromEntries([...form.entries()].filter((entry): entry is [string, string] => typeof entry[1] === "string")));
      const file = form.get("file") as File;
      const stored = { id: `${anthropic ? "file_" : "file-"}${next++}`, filename: file.name, bytes: Buffer.from(await file.arrayBuffer()), type: file.type, created: 1_700_000_000 + next };
      store.push(stored);
      return json(200, describe(stored));
    }
    const found = id ? store.find((f) => f.id === id) : undefined;
    if (id && !found) return json(404, { error: { message: "No such file" } });
    if (req.method === "DELETE") {
      store.splice(store.indexOf(found!), 1);
      return json(200, anthropic ? { id, type: "file_deleted" } : { id, object: "file", deleted: true });
    }
    if (found && url.pathname.endsWith("/content")) return void res.writeHead(200, { "content-type": found.type || "application/octet-stream" }).end(found.bytes);
    if (found) return json(200, describe(found));
    const limit = Number(url.searchParams.get("limit") ?? 20);
    const after = url.searchParams.get("after") ?? url.searchParams.get("after_id");
    const start = after ? store.findIndex((f) => f.id === after) + 1 : 0;
    const page = store.slice(start, start + limit);
    return json(200, {
      ...(anthropic ? {} : { object: "list" }),
      data: page.map(describe),
      first_id: page[0]?.id ?? null,
      last_id: page.at(-1)?.id ?? null,
      has_more: start + limit < store.length,
    });
  });
  const listening = await listenLocal(server);
  fake.baseUrl = listening.baseUrl;
  fake.stop = listening.stop;
  return fake;
}
