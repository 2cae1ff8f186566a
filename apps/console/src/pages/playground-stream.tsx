import { ApiError, errorOf, urlOf } from "../api.js";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What the playground shows about the generation it just streamed. */
export interface GenerationFacts {
  id: string | null;
  cost: number | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Milliseconds from sending to the first piece of the answer, as this browser saw them. */
  firstTokenMs: number | null;
  totalMs: number;
  /** An error the gateway sent in the stream after it had started (the status was already 200). */
  error: string | null;
  /** The operator stopped the stream after the gateway had started it: the generation exists and is charged. */
  stopped: boolean;
}

interface Chunk {
  id?: string;
  error?: { message?: string; code?: number | string };
  choices?: { delta?: { content?: string | null } }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; cost?: number };
}

export interface StreamRequest {
  key: string;
  model: string;
  messages: ChatMessage[];
  signal: AbortSignal;
  onDelta: (text: string) => void;
}

/**
 * Sends a streamed chat completion with an inference key — deliberately not through the console's `call`,
 * whose 401 would sign the operator out — and reads the server-sent events as they arrive.
 * Throws an `ApiError` when the gateway refuses the request, and an `AbortError` when stopped before the
 * gateway answered. Stopped once the stream has started, it returns what it gathered with `stopped` set:
 * the gateway records and charges that generation, and its id came with the answer's headers.
 */
export async function streamChat({ key, model, messages, signal, onDelta }: StreamRequest): Promise<GenerationFacts> {
  const started = performance.now();
  let res: Response;
  try {
    res = await fetch(urlOf("/chat/completions"), {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ model, stream: true, messages }),
      signal,
      cache: "no-store",
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new ApiError(0, "The gateway could not be reached.");
  }
  if (!res.ok) throw await errorOf(res);
  if (!res.body) throw new ApiError(res.status, "The gateway answered without a stream.");

  const facts: GenerationFacts = {
    id: res.headers.get("x-generation-id"),
    cost: null,
    promptTokens: null,
    completionTokens: null,
    firstTokenMs: null,
    totalMs: 0,
    error: null,
    stopped: false,
  };

  /** One event: its `data:` lines joined; comment lines (`: OPENROUTER PROCESSING`) keep the stream alive and say nothing. */
  const take = (event: string): "done" | undefined => {
    const data = event
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""))
      .join("\n");
    if (!data) return undefined;
    if (data.trim() === "[DONE]") return "done";
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return undefined;
    }
    facts.id ??= chunk.id ?? null;
    const text = chunk.choices?.[0]?.delta?.content;
    if (text) {
      facts.firstTokenMs ??= performance.now() - started;
      onDelta(text);
    }
    if (chunk.usage) {
      facts.cost = chunk.usage.cost ?? facts.cost;
      facts.promptTokens = chunk.usage.prompt_tokens ?? facts.promptTokens;
      facts.completionTokens = chunk.usage.completion_tokens ?? facts.completionTokens;
    }
    if (chunk.error) {
      // An in-band error ends the stream; no [DONE] follows it.
      facts.error = `The generation failed after it started: ${chunk.error.message ?? "no reason given"}${chunk.error.code ? ` (${chunk.error.code})` : ""}.`;
      return "done";
    }
    return undefined;
  };

  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      // Stopping aborts the fetch; this also catches a chunk that was already on its way.
      signal.throwIfAborted();
      buffer = (buffer + (done ? decoder.decode() : decoder.decode(value, { stream: true }))).replace(/\r\n/g, "\n");
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        if (take(event) === "done") {
          await reader.cancel();
          return { ...facts, totalMs: performance.now() - started };
        }
      }
      if (done) break;
    }
    // A stream cut short of [DONE] may still end in a last event without its blank line.
    if (buffer.trim()) take(buffer);
    facts.error ??= "The stream ended before the gateway said it was done; the answer may be incomplete.";
  } catch {
    // Whatever the read threw, a stopped stream is a stopped stream; its cost is on its record.
    if (signal.aborted) return { ...facts, stopped: true, totalMs: performance.now() - started };
    facts.error = "The connection broke while the answer was streaming.";
  }
  return { ...facts, totalMs: performance.now() - started };
}
