import { runStandalone } from "./run.js";

/** `npm start`: the whole gateway in one process. */
await runStandalone();
