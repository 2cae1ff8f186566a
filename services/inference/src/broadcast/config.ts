import { otlpDestination, webhookDestination, type Destination } from "./destinations.js";

export interface BroadcastConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_HEADERS?: string | undefined;
  OTEL_SERVICE_NAME: string;
  BROADCAST_WEBHOOK_URL?: string | undefined;
  BROADCAST_WEBHOOK_SECRET?: string | undefined;
}

/** `a=1,b=2` (values may be percent-encoded), as OpenTelemetry's exporters read OTEL_EXPORTER_OTLP_HEADERS. */
const otlpHeaders = (text = "") =>
  Object.fromEntries(
    text
      .split(",")
      .map((pair) => pair.split("="))
      .filter((parts) => parts.length >= 2 && parts[0]!.trim())
      .map(([name, ...value]) => [name!.trim().toLowerCase(), decodeURIComponent(value.join("=").trim())]),
  );

/** The destinations the operator configured; a webhook without its secret is refused at start. */
export function broadcastDestinations(config: BroadcastConfig): Destination[] {
  const destinations: Destination[] = [];
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT) destinations.push(otlpDestination(config.OTEL_EXPORTER_OTLP_ENDPOINT, otlpHeaders(config.OTEL_EXPORTER_OTLP_HEADERS), config.OTEL_SERVICE_NAME));
  if (config.BROADCAST_WEBHOOK_URL) {
    if (!config.BROADCAST_WEBHOOK_SECRET) throw new Error("BROADCAST_WEBHOOK_URL needs BROADCAST_WEBHOOK_SECRET, which signs every delivery");
    destinations.push(webhookDestination(config.BROADCAST_WEBHOOK_URL, config.BROADCAST_WEBHOOK_SECRET));
  }
  return destinations;
}
