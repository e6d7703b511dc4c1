// A role that only looks (viewer, reviewer) sees every control that would change the graph
// disabled, with the reason as its tooltip (issue 21, "role-blind editor"): the toolbar's own
// (toolbar.ts) and, here, those of the side panels, found by one list of selectors. Controls
// that only show something (projections, compare, explain, runs) stay usable.

/** The side panels' controls that change the graph. */
export const EDITING_CONTROLS = [
  ".geon-axes input",
  ".geon-axes button",
  ".geon-inspector .geon-fields input",
  ".geon-inspector .geon-fields select",
  ".geon-inspector .geon-fields textarea",
  ".geon-inspector .geon-apply",
  ".geon-shards form input",
  ".geon-shards form select",
  ".geon-shard-apply",
  ".geon-app-remove",
  ".geon-plan-form input",
  ".geon-plan-save",
  ".geon-plan-by-mapping input",
  ".geon-plan-create",
  ".geon-plan-switch",
  ".geon-plan-rename",
  ".geon-plan-delete",
  ".geon-issue-fix",
].join(", ");

type Control = HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/** Disable ``root``'s editing controls with ``reason`` as their tooltip (null: enable them again,
 * with the tooltip they had). */
export function markReadOnly(root: ParentNode, reason: string | null): void {
  for (const control of root.querySelectorAll<Control>(EDITING_CONTROLS)) {
    if (reason !== null) {
      if (!control.dataset.readOnly) control.dataset.title = control.title;
      control.dataset.readOnly = "1";
      control.disabled = true;
      control.title = reason;
    } else if (control.dataset.readOnly) {
      delete control.dataset.readOnly;
      control.disabled = false;
      control.title = control.dataset.title ?? "";
    }
  }
}
