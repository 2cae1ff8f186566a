import type { Response, ResponseStreamEvent } from "openai/resources/responses/responses";

/** Every event of a streamed response, in order. */
export async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The events of a raw `text/event-stream` body, from their `data:` lines. */
export const parseEvents = (body: string): ResponseStreamEvent[] =>
  body
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as ResponseStreamEvent);

/** The event types in order, a run of deltas of one kind shown once. */
export const shape = (events: ResponseStreamEvent[]): string[] =>
  events.map((e) => e.type).filter((type, i, all) => !(type.endsWith(".delta") && all[i - 1] === type));

/** Whether every event's sequence number is above the one before it. */
export const increasing = (events: ResponseStreamEvent[]): boolean => events.every((e, i) => i === 0 || e.sequence_number > events[i - 1]!.sequence_number);

/** The deltas of one event type, joined. */
export const deltas = (events: ResponseStreamEvent[], type: string): string => events.map((e) => (e.type === type && "delta" in e ? String(e.delta) : "")).join("");

/** The response the stream ended with; throws when it ended otherwise. */
export function completedOf(events: ResponseStreamEvent[]): Response {
  const last = events.at(-1);
  if (last?.type !== "response.completed") throw new Error(`the stream ended with ${last?.type ?? "nothing"}`);
  return last.response;
}

/** What an answer says, whatever its ids and clock (and the `parsed` field the openai stream helper adds). */
export const substance = (r: Response) => ({
  status: r.status,
  model: r.model,
  output_text: r.output_text,
  output: JSON.parse(JSON.stringify(r.output, (k: string, v: unknown) => (k === "id" || k === "parsed" ? undefined : v))) as unknown,
  usage: r.usage,
  instructions: r.instructions,
  max_output_tokens: r.max_output_tokens,
});

/** The events of a streamed answer made only of text. */
export const textEvents = [
  "response.created",
  "response.in_progress",
  "response.output_item.added",
  "response.content_part.added",
  "response.output_text.delta",
  "response.output_text.done",
  "response.content_part.done",
  "response.output_item.done",
  "response.completed",
];
