export * from "./attempts.js";
export * from "./candidates.js";
export * from "./errors.js";
export * from "./failure.js";
export * from "./http.js";
export * from "./safe-fetch.js";
export * from "./sse.js";
