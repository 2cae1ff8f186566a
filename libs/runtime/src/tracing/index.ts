export * from "./traceparent.js";
export * from "./otlp.js";
export * from "./exporter.js";
export * from "./spans.js";
export * from "./server.js";
export * from "./setup.js";
