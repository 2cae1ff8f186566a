import { loadAgentConfig } from "../config.js";
import { createAgentServer } from "./server.js";

/** The entry of a sandbox pod (SANDBOX_RUNNER=kubernetes): `node services/sandbox/dist/agent/main.js`. */
const config = loadAgentConfig();
const server = createAgentServer(config.SANDBOX_HOME, config.SANDBOX_AGENT_TOKEN);
server.listen(config.PORT, "0.0.0.0", () => console.log(JSON.stringify({ msg: "sandbox agent listening", port: config.PORT })));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
