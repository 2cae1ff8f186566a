import { createServer, type IncomingHttpHeaders } from "node:http";
import { listenLocal } from "./listen.js";

/** One span as an OTLP/JSON export carries it, with its attributes read into plain values. */
export interface CollectedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  traceState: string | undefined;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number; message?: string } | undefined;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpBody {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: OtlpValue }> };
    scopeSpans: Array<{ scope: { name: string }; spans: Array<Omit<CollectedSpan, "service" | "scope" | "attributes"> & { attributes: Array<{ key: string; value: OtlpValue }> }> }>;
  }>;
}

export interface FakeCollector {
  /** The endpoint to configure (`OTEL_EXPORTER_OTLP_ENDPOINT`); exports go to `<url>/v1/traces`. */
  url: string;
  /** Every export request: its path, headers and the number of spans it carried. */
  exports: Array<{ path: string; headers: IncomingHttpHeaders; spans: number }>;
  spans: CollectedSpan[];
  /** Answers the next exports with this status (200 again when undefined). */
  answer: number | undefined;
  /** Holds every export unanswered until the returned function is called. */
  hold(): () => void;
  stop(): Promise<void>;
}

const valueOf = (value: OtlpValue): string | number | boolean =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue ?? ""));

/** An OTLP/HTTP JSON receiver on 127.0.0.1 that keeps every span it is sent. */
export async function startFakeCollector(): Promise<FakeCollector> {
  let held: Promise<void> | undefined;
  const collector: FakeCollector = {
    url: "",
    exports: [],
    spans: [],
    answer: undefined,
    hold() {
      let release = () => {};
      held = new Promise((resolve) => (release = resolve));
      return () => {
        held = undefined;
        release();
      };
    },
    stop: async () => {},
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (held) await held;
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpBody;
    let count = 0;
    for (const resource of body.resourceSpans) {
      const service = String(valueOf(resource.resource.attributes.find((a) => a.key === "service.name")?.value ?? {}));
      for (const scopeSpans of resource.scopeSpans) {
        for (const span of scopeSpans.spans) {
          count += 1;
          collector.spans.push({
            ...span,
            service,
            scope: scopeSpans.scope.name,
            parentSpanId: span.parentSpanId,
            traceState: span.traceState,
            attributes: Object.fromEntries(span.attributes.map((a) => [a.key, valueOf(a.value)])),
          });
        }
      }
    }
    collector.exports.push({ path: req.url ?? "", headers: req.headers, spans: count });
    res.writeHead(collector.answer ?? 200, { "content-type": "application/json" }).end("{}");
  });
  const listening = await listenLocal(server);
  collector.url = listening.baseUrl.replace(/\/v1$/, "");
  collector.stop = listening.stop;
  return collector;
}
