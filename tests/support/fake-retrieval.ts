import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenLocal } from "./listen.js";

/**
 * One fake server for every embeddings and rerank wire format, each under its own base path: `/openai`
 * (and OpenAI-compatible), `/gemini`, `/cohere`, `/voyage`, `/jina`. The upstream model name picks the
 * behaviour: `ok`, `no-usage`, `escaped`, `fail-500`, `rate-limited`, `bad-request`, `slow` (answers after 300 ms);
 * on OpenAI's embeddings wire also `half-token` (half a token more than it counted), `huge-usage` (5e12
 * tokens) and `ragged` (the first vector one value short).
 */
export interface RetrievalRequest {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface FakeRetrieval {
  /** `http://127.0.0.1:<port>`: base URLs are this plus a wire's path. */
  origin: string;
  requests: RetrievalRequest[];
  stop(): Promise<void>;
}

/** The fake's vector for a text: its length, its first character's code, and fixed values, `dims` long. */
export function fakeVector(text: string, dims = 4): number[] {
  const base = [text.length, text.charCodeAt(0) || 0, 0.5, -1.25];
  return Array.from({ length: dims }, (_, i) => base[i % base.length]! + Math.floor(i / base.length));
}

/** The fake's token count of a text (a token per four characters) or of token ids. */
export const fakeTokens = (input: string | number[]): number => (typeof input === "string" ? Math.ceil(input.length / 4) : input.length);

/** The fake's relevance of a document to a query: shared words over the document's words. */
export function fakeScore(query: string, document: string): number {
  const words = new Set(query.toLowerCase().split(/\W+/).filter(Boolean));
  const own = document.toLowerCase().split(/\W+/).filter(Boolean);
  return own.length ? Math.round((own.filter((w) => words.has(w)).length / own.length) * 1000) / 1000 : 0;
}

const toBase64 = (vector: number[]) => Buffer.from(new Float32Array(vector).buffer).toString("base64");

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** Failing behaviours answer here; undefined: answer normally. */
function failure(model: string, res: ServerResponse): boolean {
  if (model === "fail-500") return (send(res, 500, { error: { message: "upstream broke" } }), true);
  if (model === "rate-limited") return (res.writeHead(429, { "retry-after": "1", "content-type": "application/json" }), res.end('{"error":{"message":"slow down"}}'), true);
  if (model === "bad-request") return (send(res, 400, { error: { message: "input rejected" } }), true);
  return false;
}

const ranked = (query: string, documents: string[], top: number | undefined) =>
  documents
    .map((d, index) => ({ index, relevance_score: fakeScore(query, d) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, top ?? documents.length);

/** Tokens of the query with each document, as Voyage and Jina count them. */
function rerankUsage(body: Record<string, unknown>, model: string) {
  if (model === "no-usage") return {};
  const query = String(body.query);
  return { usage: { total_tokens: (body.documents as string[]).reduce((sum, d) => sum + fakeTokens(query) + fakeTokens(d), 0) } };
}

type Handler = (body: Record<string, unknown>, res: ServerResponse, model: string) => void;

const texts = (value: unknown): Array<string | number[]> => (Array.isArray(value) ? (value as Array<string | number[]>) : [value as string]);

const handlers: Array<[RegExp, Handler]> = [
  [
    /^\/(openai|jina)\/embeddings$/,
    (body, res, model) => {
      const inputs = texts(body.input);
      const dims = typeof body.dimensions === "number" ? body.dimensions : 4;
      const counted = inputs.reduce((sum: number, i) => sum + fakeTokens(i), 0);
      const tokens = model === "huge-usage" ? 5e12 : model === "half-token" ? counted + 0.5 : counted;
      // Out of order, as OpenAI allows: the index places each vector.
      const data = inputs
        .map((input, index) => {
          const vector = fakeVector(typeof input === "string" ? input : input.join(" "), dims - (model === "ragged" && index === 0 ? 1 : 0));
          return { object: "embedding", index, embedding: body.encoding_format === "base64" ? toBase64(vector) : vector };
        })
        .reverse();
      const answer = JSON.stringify({ object: "list", data, model, ...(model === "no-usage" ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }) });
      res.writeHead(200, { "content-type": "application/json" });
      // `escaped`: the same answer with an escape in it, as a server that escapes non-ASCII writes it.
      res.end(model === "escaped" ? answer.replace('"object":"list"', '"object":"list","note":"caf\\u00e9"') : answer);
    },
  ],
  [
    /^\/gemini\/models\/[^/:]+:batchEmbedContents$/,
    (body, res) => {
      const requests = body.requests as Array<{ content: { parts: Array<{ text: string }> }; outputDimensionality?: number }>;
      send(res, 200, { embeddings: requests.map((r) => ({ values: fakeVector(r.content.parts.map((p) => p.text).join(""), r.outputDimensionality ?? 4) })) });
    },
  ],
  [
    /^\/cohere\/v2\/embed$/,
    (body, res) => {
      // Plain texts, or `inputs` items of text parts.
      const items = body.inputs as Array<{ content: Array<{ text: string }> }> | undefined;
      const inputs = items ? items.map((i) => i.content.map((p) => p.text).join("")) : texts(body.texts);
      const dims = typeof body.output_dimension === "number" ? body.output_dimension : 4;
      const tokens = inputs.reduce((sum: number, i) => sum + fakeTokens(i), 0);
      send(res, 200, { id: "cohere-embed-1", embeddings: { float: inputs.map((i) => fakeVector(String(i), dims)) }, texts: inputs, meta: { billed_units: { input_tokens: tokens } } });
    },
  ],
  [
    /^\/cohere\/v2\/rerank$/,
    (body, res) => {
      const documents = body.documents as string[];
      send(res, 200, { id: "cohere-rerank-1", results: ranked(String(body.query), documents, body.top_n as number | undefined), meta: { billed_units: { search_units: Math.ceil(documents.length / 100) } } });
    },
  ],
  [
    /^\/voyage\/embeddings$/,
    (body, res, model) => {
      const inputs = texts(body.input);
      const dims = typeof body.output_dimension === "number" ? body.output_dimension : 4;
      const tokens = inputs.reduce((sum: number, i) => sum + fakeTokens(i), 0);
      const data = inputs.map((input, index) => {
        const vector = fakeVector(String(input), dims);
        return { object: "embedding", index, embedding: body.encoding_format === "base64" ? toBase64(vector) : vector };
      });
      send(res, 200, { object: "list", data, model, usage: { total_tokens: tokens } });
    },
  ],
  [/^\/voyage\/rerank$/, (body, res, model) => send(res, 200, { object: "list", data: ranked(String(body.query), body.documents as string[], body.top_k as number | undefined), model, ...rerankUsage(body, model) })],
  [/^\/jina\/rerank$/, (body, res, model) => send(res, 200, { model, results: ranked(String(body.query), body.documents as string[], body.top_n as number | undefined), ...rerankUsage(body, model) })],
];

export async function startFakeRetrieval(): Promise<FakeRetrieval> {
  const requests: RetrievalRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readJson(req);
      const path = (req.url ?? "").split("?")[0]!;
      requests.push({ path, headers: req.headers, body });
      const gemini = /\/models\/([^/:]+):/.exec(path)?.[1];
      const model = String(gemini ?? body.model ?? "");
      if (failure(model, res)) return;
      if (model === "slow") await new Promise((resolve) => setTimeout(resolve, 300));
      const handler = handlers.find(([pattern]) => pattern.test(path));
      if (!handler) return send(res, 404, { error: { message: `no route ${path}` } });
      handler[1](body, res, model);
    })().catch((error: unknown) => send(res, 500, { error: { message: `fake failed: ${String(error)}` } }));
  });
  const { baseUrl, stop } = await listenLocal(server);
  return { origin: baseUrl.replace(/\/v1$/, ""), requests, stop };
}
