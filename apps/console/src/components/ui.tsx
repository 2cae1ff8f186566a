import { cloneElement, isValidElement, type ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";

/** A refusal or failure, read out by screen readers when it appears. */
export function ErrorNote({ error }: { error: string | Error | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {typeof error === "string" ? error : error.message}
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children && <p>{children}</p>}
    </div>
  );
}

export const Loading = () => (
  <p class="loading" role="status">
    Loading…
  </p>
);

/**
 * A modal dialog on the platform's `<dialog>`: focus stays inside, Escape closes it, and focus returns to
 * where it was. `side` makes it a drawer along the right edge.
 */
export function Dialog({ title, onClose, side, children }: { title: string; onClose: () => void; side?: boolean; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    const before = document.activeElement as HTMLElement | null;
    dialog.showModal();
    return () => {
      dialog.close();
      before?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      class={side ? "drawer" : "modal"}
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <header>
        <h2 id="dialog-title">{title}</h2>
        <button type="button" class="quiet" aria-label="Close" onClick={onClose}>
          ✕
        </button>
      </header>
      <div class="dialog-body">{children}</div>
    </dialog>
  );
}

/** Copies text to the clipboard; where the browser refuses (no secure context), the text is selected to copy by hand. */
export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async (e) => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
        } catch {
          const code = (e.currentTarget as HTMLElement).parentElement?.querySelector("code");
          if (code) getSelection()?.selectAllChildren(code);
        }
      }}
    >
      {done ? "Copied" : label}
    </button>
  );
}

/**
 * A labelled form control. The label points at the control by id instead of wrapping it, so the control's
 * accessible name is the label alone (a wrapped select would add its options, a wrapped hint its text);
 * the hint describes the control.
 */
export function Field({ label, hint, children }: { label: string; hint?: string; children: ComponentChildren }) {
  const id = useId();
  const control = isValidElement(children) ? cloneElement(children, { id, "aria-describedby": hint ? `${id}-hint` : undefined }) : children;
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {label}
      </label>
      {control}
      {hint && (
        <span class="hint" id={`${id}-hint`}>
          {hint}
        </span>
      )}
    </div>
  );
}

/**
 * A dialog form's footer: the refusal when there is one, then submit and Cancel. While `busy` the submit button says
 * so and stays disabled, so a slow answer is not sent twice.
 */
export function FormActions({ error, busy, submit, busyText, onCancel }: { error: string | null; busy: boolean; submit: string; busyText: string; onCancel: () => void }) {
  return (
    <>
      <ErrorNote error={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {busy ? busyText : submit}
        </button>
        <button type="button" class="quiet" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

/** A list that did not load, with a way to ask again; `what` names the list ("Keys", "Presets"). */
export function LoadError({ what, error, onRetry }: { what: string; error: Error | null; onRetry: () => void }) {
  if (!error) return null;
  return (
    <div class="load-error">
      <ErrorNote error={`${what} could not be loaded: ${error.message}`} />
      <button type="button" class="quiet" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}
