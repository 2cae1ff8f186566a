import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

const completion = JSON.stringify({
  id: "bench",
  object: "chat.completion",
  created: 1,
  model: "bench",
  choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hello! How can I help you today?" } }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 },
});
const words = "Hello ! How can I help you today ?".split(" ");
const frame = (o: object) => `data: ${JSON.stringify({ id: "bench", object: "chat.completion.chunk", created: 1, model: "bench", ...o })}\n\n`;

/** The upstream every target of a benchmark calls: an OpenAI-compatible server answering at once. */
export async function startFakeUpstream(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { stream?: boolean };
      if (!body.stream) {
        res.writeHead(200, { "content-type": "application/json" }).end(completion);
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const word of words) res.write(frame({ choices: [{ index: 0, delta: { content: `${word} ` } }] }));
      res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
      res.write(frame({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } }));
      res.end("data: [DONE]\n\n");
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => server.close() };
}
