import { completionsRequest, type CompletionsRequest } from "@switchyard/contracts";
import { badRequest, parseInput, sendJson, type Caller } from "@switchyard/runtime";
import type { Candidate } from "@switchyard/upstream";
import type { ServerResponse } from "node:http";
import type { InferenceDeps } from "../../deps.js";
import { planGeneration, type Generation } from "../../generation/generation.js";
import type { PartBatch } from "../../generation/parts.js";
import { buildPlan, type Plan } from "../../generation/plan.js";
import { bufferedTurn, relayTurn, type StreamSink } from "../../generation/turns.js";
import { hidesReasoning } from "../../providers/hide-reasoning.js";
import type { Accounted } from "../../accounting.js";
import { hasOwnApi } from "../../routing/attempts.js";
import { SseStream } from "../../sse.js";
import type { JsonRequest } from "../chat/route.js";
import { completionBody, completionChunk, echoChunk, errorChunk, usageChunk, type TextFrame, type TextRender } from "./answer.js";
import { carriesSystemPrompt, legacyBody, promptText, systemPromptRefusal, toChatRequest, translationRefusals } from "./request.js";

/** How the serving endpoint's answer is written: a chat endpoint's `echo` is the gateway's to add. */
function renderFor(plan: Plan, request: CompletionsRequest, candidate: Candidate): TextRender {
  const translated = !hasOwnApi("text", candidate.endpoint.adapter);
  return { ...(request.echo && translated ? { echoPrompt: promptText(request) } : {}), hideReasoning: hidesReasoning(plan.request) };
}

/**
 * The plan less the endpoints with a legacy route when the request's preset has a system prompt: the legacy
 * wire sends the prompt as given and has no place for one, so, as a chat-only endpoint is left out for
 * `suffix`, those endpoints are left out (and named among the excluded), and the request is refused with 400
 * naming it when none is left. The preset is known only once the plan is built, hence after it.
 */
function carriedPlan(plan: Plan): Plan {
  if (!carriesSystemPrompt(plan.body)) return plan;
  const legacy = (candidate: Candidate) => hasOwnApi("text", candidate.endpoint.adapter);
  const candidates = plan.candidates.filter((candidate) => !legacy(candidate));
  if (candidates.length === 0) throw badRequest(`Invalid body: no endpoint of the requested models can carry it: ${systemPromptRefusal}`);
  const left = plan.candidates.filter(legacy).map((candidate) => `${candidate.model} on ${candidate.endpoint.provider}: ${systemPromptRefusal}`);
  return { ...plan, candidates, excluded: [...plan.excluded, ...left] };
}

/** Legacy completions as server-sent events: `text_completion` frames, the usage frame, then `[DONE]`. */
class TextStream extends SseStream implements StreamSink {
  private render: TextRender = {};

  constructor(
    private readonly plan: Plan,
    private readonly request: CompletionsRequest,
    res: ServerResponse,
  ) {
    super(res, plan.generationId);
  }

  frame(model: string): TextFrame {
    return { id: this.plan.generationId, created: this.created, model };
  }

  accepted(_generation: Generation, candidate: Candidate): void {
    this.render = renderFor(this.plan, this.request, candidate);
    if (this.render.echoPrompt !== undefined) this.sse.data(echoChunk(this.frame(candidate.model), this.render.echoPrompt));
  }

  parts(batch: PartBatch, candidate: Candidate): void {
    // The echo went out as a frame of its own; the provider's text follows it as it is.
    const chunk = completionChunk(batch, this.frame(candidate.model), { ...this.render, echoPrompt: undefined });
    if (chunk) this.sse.data(chunk);
  }

  fail(code: number, message: string, model: string): void {
    this.sse.data(errorChunk(this.frame(model), code, message));
  }

  /** The usage frame, with `openrouter_metadata` when the request asked for it, then `[DONE]`. */
  close(candidate: Candidate, accounted: Accounted, metadata: object): void {
    this.sse.data({ ...usageChunk(accounted, this.frame(candidate.model)), ...metadata });
    this.sse.done();
  }
}

/**
 * `POST /completions`: the legacy text completions. The request is planned as a chat request with the prompt
 * as its one user message; OpenAI-compatible endpoints get their own `/completions` route with the prompt as
 * it was, others the chat translation. Fields a translation cannot carry (`suffix`, `logprobs`) keep the
 * request on endpoints with a legacy route, or are refused with 400 when it has none; a preset's system
 * prompt, which a legacy route cannot carry, keeps it on the others (`carriedPlan`).
 */
export const completionsRoute =
  (deps: InferenceDeps) =>
  async (req: JsonRequest, res: ServerResponse, caller: Caller): Promise<void> => {
    const request = parseInput(completionsRequest, req.body, "body");
    const refused = translationRefusals(request);
    const cannotCarry = refused.length
      ? (candidate: Candidate) => (hasOwnApi("text", candidate.endpoint.adapter) ? undefined : `${refused.join(", ")}: only endpoints with a legacy completions route take ${refused.length > 1 ? "them" : "it"}`)
      : undefined;
    const plan = carriedPlan(await buildPlan(deps, { headers: req.headers, res, caller, dialect: "completions", body: toChatRequest(request), client: req.body, ...(cannotCarry ? { cannotCarry } : {}) }));
    const generation = planGeneration(plan, { wire: "text", body: (chat) => legacyBody(request, chat) });
    if (!plan.request.stream) {
      const turn = await bufferedTurn(generation);
      const frame = { id: plan.generationId, created: Math.floor(Date.now() / 1000), model: turn.candidate.model };
      return void sendJson(res, 200, { ...completionBody(turn.completion, turn.accounted, frame, renderFor(plan, request, turn.candidate)), ...generation.metadata(turn.candidate, plan.findings) });
    }
    const sink = new TextStream(plan, request, res);
    sink.keepAlive(true);
    const turn = await relayTurn(generation, sink);
    if (turn?.status === "completed") sink.close(turn.candidate, turn.accounted, generation.metadata(turn.candidate, plan.findings));
    res.end();
  };
