import { useEffect, useRef } from "preact/hooks";
import { Empty } from "../components/ui.js";
import { millis, money, number } from "../format.js";
import type { GenerationFacts } from "./playground-stream.js";

export interface Turn {
  role: "user" | "assistant";
  content: string;
  /** The answer was cut short: stopped by the operator, or failed mid-stream. */
  note?: string;
}

/** The conversation so far; it scrolls to the newest text as the answer streams in. */
export function Conversation({ turns, streaming }: { turns: Turn[]; streaming: boolean }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const box = ref.current;
    if (box) box.scrollTop = box.scrollHeight;
  }, [turns]);
  if (turns.length === 0) {
    return <Empty title="No messages yet">Write a message below and press Send; the answer streams in here, and the next message continues the conversation.</Empty>;
  }
  return (
    // Focusable so the conversation can be scrolled with the keyboard.
    <div ref={ref} class="chat playground-chat" role="log" aria-label="Conversation" aria-busy={streaming} tabIndex={0}>
      {turns.map((turn, i) => (
        <div key={i} class={`message ${turn.role}`}>
          <div class="role">{turn.role === "user" ? "You" : "Assistant"}</div>
          {turn.content || (streaming && i === turns.length - 1 ? <span class="hint">Waiting for the first token…</span> : <span class="hint">(no text)</span>)}
          {turn.note && <div class="hint turn-note">{turn.note}</div>}
        </div>
      ))}
    </div>
  );
}

export function LastGeneration({ facts }: { facts: GenerationFacts }) {
  return (
    <section class="panel" aria-labelledby="last-generation-title">
      <h2 id="last-generation-title">Last generation</h2>
      <dl class="facts" aria-label="Last generation">
        <dt>Generation</dt>
        <dd>{facts.id ? <a href="#/activity">{facts.id}</a> : "—"}</dd>
        <dt>Cost</dt>
        <dd>{money(facts.cost)}</dd>
        <dt>Tokens</dt>
        <dd>
          {number(facts.promptTokens)} → {number(facts.completionTokens)}
        </dd>
        <dt>Time to first token</dt>
        <dd>{millis(facts.firstTokenMs)}</dd>
        <dt>Total time</dt>
        <dd>{millis(facts.totalMs)}</dd>
      </dl>
      <p class="hint">Tokens are prompt → completion; the times are measured in this browser, so they include the network.</p>
    </section>
  );
}
