import { describe, expect, it } from "vitest";
import { createCallerSigner, createCallerVerifier, createServiceSigner, createServiceVerifier } from "./internal-auth.js";

const oldSecret = "old-internal-secret-0123456789abcdef0123";
const newSecret = "new-internal-secret-0123456789abcdef0123";
const caller = { keyHash: "a".repeat(64), organizationId: "00000000-0000-4000-8000-000000000001", workspaceId: "00000000-0000-4000-8000-000000000002", management: false };

describe("rotating the internal secret", () => {
  it("accepts headers signed with a secret it is told to accept, and only those", async () => {
    const signedOld = await createCallerSigner(oldSecret)(caller);
    const signedNew = await createCallerSigner(newSecret)(caller);
    // Phase one: processes still sign with the old secret and accept the new one.
    expect(await createCallerVerifier(oldSecret, [newSecret])(signedNew)).toEqual(caller);
    // Phase two: they sign with the new one and still accept the old.
    expect(await createCallerVerifier(newSecret, [oldSecret])(signedOld)).toEqual(caller);
    // Phase three: the old secret is gone.
    expect(await createCallerVerifier(newSecret)(signedOld)).toBeUndefined();
    expect(await createCallerVerifier(newSecret, ["another-secret-0123456789abcdef012345"])(signedOld)).toBeUndefined();
  });

  it("does the same for service tokens", async () => {
    const token = await createServiceSigner(oldSecret, "inference")();
    expect(await createServiceVerifier(newSecret, [oldSecret])(token)).toBe("inference");
    expect(await createServiceVerifier(newSecret)(token)).toBeUndefined();
  });
});
