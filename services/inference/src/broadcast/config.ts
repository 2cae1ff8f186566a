import { otlpDestination, webhookDestination, type Destination } from "./destinations.js";

export interface BroadcastConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  /** Parsed from `name=value` pairs by the configuration. */
  OTEL_EXPORTER_OTLP_HEADERS: Record<string, string>;
  OTEL_SERVICE_NAME?: string | undefined;
  BROADCAST_WEBHOOK_URL?: string | undefined;
  BROADCAST_WEBHOOK_SECRET?: string | undefined;
}

/** The destinations the operator configured; a webhook without its secret is refused at start. */
export function broadcastDestinations(config: BroadcastConfig): Destination[] {
  const destinations: Destination[] = [];
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) destinations.push(otlpDestination(config.OTEL_EXPORTER_OTLP_ENDPOINT, config.OTEL_EXPORTER_OTLP_HEADERS, config.OTEL_SERVICE_NAME ?? "switchyard"));
  if (config.BROADCAST_WEBHOOK_URL) {
    if (!config.BROADCAST_WEBHOOK_SECRET) throw new Error("BROADCAST_WEBHOOK_URL needs BROADCAST_WEBHOOK_SECRET, which signs every delivery");
    destinations.push(webhookDestination(config.BROADCAST_WEBHOOK_URL, config.BROADCAST_WEBHOOK_SECRET));
  }
  return destinations;
}
