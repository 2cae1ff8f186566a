import http from "node:http";
import { authenticateKeyResponse, type KeyAuthentication } from "@switchyard/contracts";
import { serviceHeader } from "@switchyard/runtime";

/** How the router looks keys up: over HTTP in the many-process topology, by a call in standalone. */
export interface IdentityClient {
  authenticate(hash: string): Promise<KeyAuthentication | undefined>;
}

export class IdentityUnavailableError extends Error {}

/** Looks keys up on identity's internal route over a keep-alive pool. */
export function httpIdentityClient(baseUrl: string, serviceToken: () => Promise<string>): IdentityClient {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL("/internal/keys/authenticate", baseUrl);
  return {
    async authenticate(hash) {
      const body = JSON.stringify({ hash });
      const token = await serviceToken();
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = http.request(
          url,
          {
            method: "POST",
            agent,
            timeout: 5000,
            headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), [serviceHeader]: token },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
            res.on("error", reject);
          },
        );
        req.on("timeout", () => req.destroy(new Error("identity lookup timed out")));
        req.on("error", (error) => reject(new IdentityUnavailableError(error.message)));
        req.end(body);
      });
      if (status === 404) return undefined;
      if (status !== 200) throw new IdentityUnavailableError(`identity answered ${status}`);
      return authenticateKeyResponse.parse(JSON.parse(text)).data;
    },
  };
}
