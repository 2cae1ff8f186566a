import { metrics, picoToDecimal, picoToUsd, serviceOf, type Logger } from "@switchyard/runtime";

/**
 * What one generation is charged, beside what its provider's reported usage costs. Generation records take
 * this rather than a bare cost, so every route that records spend goes through `capCharge`.
 */
export interface Charge {
  /** Picodollars the key pays: the reported cost, at most the worst case held for it unless the operator allows more. */
  charged: bigint;
  /** Picodollars of the usage as the provider reported it (or as estimated), at the endpoint's prices. */
  reported: bigint;
}

export interface ChargeInput {
  logger: Logger;
  generationId: string;
  provider: string;
  model: string;
  /** The worst case the serving attempt held; undefined when nothing was held, which leaves no ceiling. */
  held: bigint | undefined;
  reported: bigint;
  /** The operator's `SPEND_CHARGE_BEYOND_HOLD`: charge the reported cost even past the hold. */
  beyondHold: boolean;
  /** The reported usage (tokens, seconds, images), only read for the warning. */
  usage: object;
}

/**
 * Zero is the floor: no usage is worth less than nothing, and a negative figure would credit the key, fail the
 * record's decimal columns and the batch of records written with it. Both figures become zero; the one that
 * came is logged at error, as it means a price or a count was wrong before it got here.
 */
function belowZero(input: ChargeInput): Charge {
  input.logger.error(
    { generationId: input.generationId, provider: input.provider, model: input.model, reportedUsd: picoToDecimal(input.reported), usage: input.usage },
    "usage priced below zero; charged nothing",
  );
  return { charged: 0n, reported: 0n };
}

/**
 * The hold is the ceiling: a key was admitted for at most its worst case, so a provider that reports more
 * than the request allowed (more tokens than `max_tokens`, more audio than was sent) must not overrun the
 * key's limit or a guardrail budget. The overrun is charged at the held amount (or, when the operator opts
 * in, as reported), logged with both figures and counted by provider and model, never silent.
 */
export function capCharge(input: ChargeInput): Charge {
  const { held, reported } = input;
  if (reported < 0n) return belowZero(input);
  if (held === undefined || reported <= held) return { charged: reported, reported };
  const charged = input.beyondHold ? reported : held;
  const labels = { service: serviceOf(input.logger), provider: input.provider, model: input.model };
  metrics.spendOverruns.inc({ ...labels, charged: input.beyondHold ? "reported" : "held" });
  metrics.spendOverrunUsd.inc({ ...labels, figure: "held" }, picoToUsd(held));
  metrics.spendOverrunUsd.inc({ ...labels, figure: "reported" }, picoToUsd(reported));
  input.logger.warn(
    {
      generationId: input.generationId,
      provider: input.provider,
      model: input.model,
      heldUsd: picoToDecimal(held),
      reportedUsd: picoToDecimal(reported),
      chargedUsd: picoToDecimal(charged),
      usage: input.usage,
    },
    input.beyondHold
      ? "provider reported usage beyond the held worst case; charged as reported (SPEND_CHARGE_BEYOND_HOLD)"
      : "provider reported usage beyond the held worst case; charged the held amount",
  );
  return { charged, reported };
}
