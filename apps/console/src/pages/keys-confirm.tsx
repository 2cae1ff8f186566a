import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { Dialog, ErrorNote } from "../components/ui.js";
import { messageOf } from "./keys-api.js";

/** Asks before something that cannot be undone; the dialog stays open with the refusal if the API says no. */
export function ConfirmDialog({
  title,
  action,
  onConfirm,
  onClose,
  children,
}: {
  title: string;
  action: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <ErrorNote error={error} />
      <div class="actions">
        <button type="button" class="quiet" onClick={onClose}>
          Cancel
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={async () => {
            setBusy(true);
            setError(null);
            try {
              await onConfirm();
            } catch (e) {
              setError(messageOf(e));
              setBusy(false);
            }
          }}
        >
          {busy ? "Deleting…" : action}
        </button>
      </div>
    </Dialog>
  );
}
