import type { AnthropicFile, FileProvider, OpenAiFile } from "@switchyard/contracts";
import { badRequest, notFound } from "@switchyard/runtime";
import { UpstreamError, upstreamFailure } from "@switchyard/upstream";
import type { Response } from "express";
import type { StorageDeps } from "../deps.js";
import type { Owner } from "../files/records.js";
import type { ProviderAccount, ProviderFiles } from "./types.js";

type AnyFiles = ProviderFiles<OpenAiFile | AnthropicFile>;

/**
 * Runs one call on a provider's Files API with the workspace's own key: no key is a 400 that says how to
 * add one, the provider's 404 is ours, and its other failures are told as for inference.
 */
export async function providerCall<T>(
  deps: StorageDeps,
  owner: Owner,
  provider: FileProvider,
  res: Response,
  call: (files: AnyFiles, account: ProviderAccount, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const account = await deps.accountFor(owner, provider);
  if (!account) {
    throw badRequest(`This workspace has no ${provider} key; add one with PUT /workspaces/${owner.workspaceId}/provider-keys/${provider}`);
  }
  const abort = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abort.abort(new DOMException("client disconnected", "AbortError"));
  });
  try {
    return await call(deps.providers[provider], account, abort.signal);
  } catch (error) {
    if (error instanceof UpstreamError && error.status === 404) throw notFound("File not found");
    throw upstreamFailure(error, false);
  }
}
