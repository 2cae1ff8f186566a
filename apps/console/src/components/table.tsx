import type { ComponentChildren } from "preact";

export interface Column {
  title: string;
  /** Right-aligned figures. */
  num?: boolean;
  /** A column of buttons needs a header for screen readers, but a visible one would only repeat the buttons. */
  hidden?: boolean;
}

/**
 * A table in its horizontal scroller, with one header row; `children` are the body's rows. A table needs a
 * name: `label`, `labelledBy` (a heading's id) or a visually hidden `caption`.
 */
export function DataTable({
  columns,
  label,
  labelledBy,
  caption,
  class: className,
  children,
}: {
  columns: Column[];
  label?: string;
  labelledBy?: string;
  caption?: string;
  class?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table aria-label={label} aria-labelledby={labelledBy} class={className}>
        {caption && <caption class="visually-hidden">{caption}</caption>}
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.title} scope="col" class={c.num ? "num" : undefined}>
                {c.hidden ? <span class="visually-hidden">{c.title}</span> : c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export interface RowAction {
  /** The button's text; its accessible name adds the row's name ("Edit alpha"), since every row has one. */
  label: string;
  onClick: () => void;
  disabled?: boolean;
  danger?: boolean;
}

/** A row's buttons, stacked, or side by side with `across`. */
export function RowActions({ name, actions, across }: { name: string; actions: RowAction[]; across?: boolean }) {
  return (
    <div class={across ? "row-actions across" : "row-actions"}>
      {/* Keyed by place: a label that flips (Disable → Enable) must keep the same button, and with it the focus. */}
      {actions.map((a, i) => (
        <button key={i} type="button" class={a.danger ? "quiet danger-text" : "quiet"} aria-label={`${a.label} ${name}`} disabled={a.disabled} onClick={a.onClick}>
          {a.label}
        </button>
      ))}
    </div>
  );
}
