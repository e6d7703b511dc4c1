// "Make training step" (issue 32): a toolbar menu that asks the server for the training step of
// the graph (POST /api/v1/graphs/<id>/training-step {optimizer, lr, loss}) and opens the new
// graph it makes; and, on a graph that is a training step (it has the `backward` and
// `optimizer` groups geon train writes), a "Forward only" / "Whole step" view switch that
// collapses or expands those two groups (view state, as every group's: never sent).

import "./trainingStep.css";
import { answerAs, ApiError, RestClient } from "../api/client";
import { el } from "./dom";

export const OPTIMIZERS = ["sgd", "momentum", "adam"] as const;
/** The groups a training step's backward pass and update live in (their Group scopes' roots). */
export const STEP_GROUPS = ["/backward", "/optimizer"] as const;

export interface TrainingRequest {
  optimizer: string;
  lr: number;
  loss: string;
}

/** The POST that makes a training step, answered with the new graph. */
export class TrainingApi extends RestClient {
  async make(graphId: string, request: TrainingRequest): Promise<{ id: string; title: string }> {
    return answerAs<{ id: string; title: string }>()(
      this.api.POST("/api/v1/graphs/{graph_id}/training-step", {
        params: { path: { graph_id: graphId } },
        body: request,
      }),
    );
  }
}

/** The request of the form's fields, or the reason it is not one (checked again by the server). */
export function readRequest(optimizer: string, lr: string, loss: string): TrainingRequest | string {
  const rate = Number(lr.trim());
  if (!OPTIMIZERS.includes(optimizer as (typeof OPTIMIZERS)[number]))
    return `optimizer "${optimizer}" is unknown; expected one of ${OPTIMIZERS.join(", ")}`;
  if (!lr.trim() || !Number.isFinite(rate) || rate <= 0 || rate > 1e6)
    return `learning rate "${lr}" is invalid; expected a number in (0, 1e6]`;
  if (!loss.trim())
    return "the loss label is empty; expected the label of a scalar tensor, e.g. loss";
  return { optimizer, lr: rate, loss: loss.trim() };
}

/** The collapsed groups of the "Forward only" view (``forwardOnly``) or the whole step's. */
export function stepView(collapsed: ReadonlySet<string>, forwardOnly: boolean): Set<string> {
  const next = new Set(collapsed);
  for (const path of STEP_GROUPS) {
    if (forwardOnly) next.add(path);
    else next.delete(path);
  }
  return next;
}

/** What the menu reads and moves of the editor. */
export interface TrainingHost {
  /** The groups of the shown document (paths), and the collapsed ones. */
  groupPaths(): ReadonlySet<string>;
  collapsed(): ReadonlySet<string>;
  setCollapsed(next: Set<string>): void;
}

/** The Train menu, placed after the Export menu of a signed-in person's editor; null without. */
export function mountTrainingStep(
  root: HTMLElement,
  csrf: string,
  host: TrainingHost,
  go = (url: string) => location.assign(url),
): HTMLDetailsElement | null {
  const graphId = root.dataset.graphId;
  if (!graphId || root.dataset.share !== "1") return null;
  const api = new TrainingApi(csrf);
  const optimizer = el(
    "select",
    { class: "geon-train-optimizer", "aria-label": "optimizer" },
    ...OPTIMIZERS.map((o) => el("option", { value: o, text: o })),
  );
  optimizer.value = "adam";
  const lr = el("input", {
    class: "geon-train-lr",
    "aria-label": "learning rate",
    value: "0.001",
    inputmode: "decimal",
  });
  const loss = el("input", { class: "geon-train-loss", "aria-label": "loss label", value: "loss" });
  const said = el("p", { class: "geon-train-said small", role: "alert" });
  const make = el("button", {
    type: "submit",
    class: "primary geon-train-make",
    text: "Make training step",
  });
  const form = el(
    "form",
    { class: "geon-train-form" },
    el("label", {}, "optimizer ", optimizer),
    el("label", {}, "learning rate ", lr),
    el("label", {}, "loss ", loss),
    make,
    said,
    el("p", {
      class: "small muted",
      text: "A new graph of yours: this forward pass, its backward pass and the update (see docs/training.md).",
    }),
  );
  const view = el("button", {
    type: "button",
    class: "geon-train-view",
    title: "Collapse or expand the backward pass and the optimizer's update",
  });
  const summary = el("summary", {
    class: "button",
    title: "Make the training step of this graph",
    text: "Train ▾",
  });
  const menu = el(
    "details",
    { class: "geon-train" },
    summary,
    el("div", { class: "geon-train-list" }, form, view),
  );
  const showView = (): void => {
    const paths = host.groupPaths();
    const isStep = STEP_GROUPS.every((p) => paths.has(p));
    view.hidden = !isStep;
    const forwardOnly = STEP_GROUPS.every((p) => host.collapsed().has(p));
    view.textContent = forwardOnly ? "Show the whole step" : "Show the forward pass only";
    view.dataset.forwardOnly = forwardOnly ? "1" : "0";
  };
  showView();
  view.addEventListener("click", () => {
    host.setCollapsed(stepView(host.collapsed(), view.dataset.forwardOnly !== "1"));
    showView();
  });
  menu.addEventListener("toggle", () => {
    if (!menu.open) return;
    const box = summary.getBoundingClientRect();
    const list = menu.lastElementChild as HTMLElement;
    list.style.top = `${Math.round(box.bottom + 4)}px`;
    list.style.left = `${Math.round(Math.max(4, Math.min(box.left, window.innerWidth - 300)))}px`;
    showView();
  });
  menu.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && menu.open) {
      menu.open = false;
      summary.focus();
      e.stopPropagation();
    }
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const request = readRequest(optimizer.value, lr.value, loss.value);
    if (typeof request === "string") {
      said.textContent = request;
      return;
    }
    said.textContent = "Deriving the training step…";
    make.disabled = true;
    api.make(graphId, request).then(
      (made) => go(`/graphs/${made.id}/`),
      (error: unknown) => {
        make.disabled = false;
        said.textContent =
          error instanceof ApiError ? error.message : "the training step could not be made";
      },
    );
  });
  const exportMenu = root.querySelector(".geon-export");
  if (exportMenu) exportMenu.after(menu);
  else root.querySelector(".geon-toolbar")?.append(menu);
  return menu;
}
