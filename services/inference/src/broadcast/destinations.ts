import { createHmac } from "node:crypto";
import { otlpTracesBody, otlpTracesUrl } from "@switchyard/runtime";
import { postJson } from "@switchyard/upstream";
import { otlpSpan, type BroadcastRecord } from "./span.js";

/** Somewhere the operator wants each generation's trace metadata to go. */
export interface Destination {
  name: string;
  send(records: BroadcastRecord[], signal: AbortSignal): Promise<void>;
}

/** OTLP over HTTP with JSON bodies, to `<endpoint>/v1/traces` (an OpenTelemetry Collector, Jaeger, Tempo…). */
export function otlpDestination(endpoint: string, headers: Record<string, string>, serviceName: string): Destination {
  const url = otlpTracesUrl(endpoint);
  return {
    name: "otlp",
    async send(records, signal) {
      const body = otlpTracesBody(new Map([[serviceName, records.map(otlpSpan)]]), "switchyard.broadcast");
      const res = await postJson("otlp", url, headers, body, signal);
      await res.body.text();
    },
  };
}

/**
 * A JSON POST signed like a payment webhook: `X-Switchyard-Signature: t=<unix seconds>,v1=<hex>` where
 * v1 is HMAC-SHA256 of `<t>.<body>` under the shared secret. Receivers check it and refuse old `t`.
 */
export function webhookDestination(url: string, secret: string): Destination {
  return {
    name: "webhook",
    async send(records, signal) {
      for (const record of records) {
        const body = JSON.stringify(record);
        const t = Math.floor(Date.now() / 1000);
        const signature = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");
        const res = await postJson("webhook", url, { "x-switchyard-signature": `t=${t},v1=${signature}`, "x-switchyard-event": "generation" }, record, signal);
        await res.body.text();
      }
    },
  };
}
