import { createAgentServer } from "./server.js";

/** The entry of a sandbox pod (SANDBOX_RUNNER=kubernetes): `node services/sandbox/dist/agent/main.js`. */
const token = process.env.SANDBOX_AGENT_TOKEN;
if (!token) {
  console.error("SANDBOX_AGENT_TOKEN is required");
  process.exit(1);
}
const port = Number(process.env.PORT ?? 8087);
const server = createAgentServer(process.env.SANDBOX_HOME ?? "/home/sandbox", token);
server.listen(port, "0.0.0.0", () => console.log(JSON.stringify({ msg: "sandbox agent listening", port })));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
