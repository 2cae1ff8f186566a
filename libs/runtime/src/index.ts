export * from "./db/index.js";
