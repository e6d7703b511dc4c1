// The About panel of the editor: the graph's title and its whole description (Markdown,
// rendered safely by ./markdown), opened from the header (the title, or the About button).
// Editors change the title in place (Enter saves, Escape puts the saved one back) and the
// description in a textarea (Save, or Ctrl+Enter; Cancel or Escape); each is a PATCH of
// /api/v1/graphs/<id> on the current version, and a refusal is shown under the field with the
// typed text kept. Editors also switch the graph's "strict broadcasting" (AccidentalBroadcast
// as an error; the server sends every editor the re-checked issues). Viewers read all of it. The page gives the description (a json_script) and
// whether the user may edit (data-can-edit); the server checks the role again.

import "./about.css";
import { answer, answerAs, ApiError, RestClient } from "../api/client";
import { button, el } from "./dom";
import { renderMarkdown } from "./markdown";

export interface About {
  title: string;
  description: string;
  strictBroadcasting: boolean;
}

/** PATCH of the title and/or description, based on the version current just before. */
export class AboutApi extends RestClient {
  constructor(
    csrf: string,
    private readonly graphId: string,
  ) {
    super(csrf);
  }

  async update(patch: Partial<About>): Promise<About> {
    const params = { path: { graph_id: this.graphId } };
    const { version } = await answer(this.api.GET("/api/v1/graphs/{graph_id}", { params }));
    return answerAs<About>()(
      this.api.PATCH("/api/v1/graphs/{graph_id}", {
        params,
        body: { baseVersion: version, ...patch },
      }),
    );
  }
}

export interface AboutPanel {
  element: HTMLDialogElement;
  open(): void;
}

/** The About dialog, bound to the header's ``.graph-title`` and ``.graph-about-open`` buttons. */
export function mountAbout(root: HTMLElement, csrf: string): AboutPanel {
  const canEdit = root.dataset.canEdit === "1";
  const api = new AboutApi(csrf, root.dataset.graphId ?? "");
  const header = document.querySelector<HTMLElement>(".graph-title");
  const given = document.getElementById("geon-description")?.textContent;
  const saved: About = {
    title: header?.textContent ?? "",
    description: given ? (JSON.parse(given) as string) : "",
    strictBroadcasting: root.dataset.strictBroadcasting === "1",
  };

  const titleError = el("p", { class: "geon-about-error", role: "alert" });
  const titleView = el("h2", { class: "geon-about-title", text: saved.title });
  const titleInput = el("input", {
    class: "geon-about-title-input",
    "aria-label": "title",
    maxlength: "200",
    value: saved.title,
  });
  const rendered = el("div", { class: "geon-about-description markdown" });
  const textarea = el("textarea", {
    class: "geon-about-textarea",
    "aria-label": "description (Markdown)",
    rows: "14",
    maxlength: "20000",
  });
  const descriptionError = el("p", { class: "geon-about-error", role: "alert" });
  const editButton = button("Edit description", "Change the description (Markdown)", () =>
    startEditing(),
  );
  const saveButton = button(
    "Save",
    "Save the description (Ctrl+Enter)",
    () => void saveDescription(),
    "primary",
  );
  const cancelButton = button("Cancel", "Keep the saved description (Escape)", () => stopEditing());
  const editing = el(
    "div",
    { class: "geon-about-editing", hidden: "" },
    textarea,
    el("div", { class: "geon-about-actions" }, saveButton, cancelButton),
  );
  const strictBox = el("input", {
    type: "checkbox",
    class: "geon-about-strict",
    id: "geon-about-strict",
  });
  const strictError = el("p", { class: "geon-about-error", role: "alert" });
  const strictText =
    "Strict broadcasting: an accidental broadcast (operands that share no axis, or two equal-length axes that likely mean the same) is an error, not a warning";
  const strictState = el("p", { class: "geon-about-setting muted small" });
  const strictRow = canEdit
    ? el(
        "div",
        { class: "geon-about-setting" },
        strictBox,
        el("label", { for: "geon-about-strict", text: ` ${strictText}` }),
        strictError,
      )
    : strictState;
  strictBox.addEventListener("change", () => {
    const wanted = strictBox.checked;
    strictBox.disabled = true;
    void save({ strictBroadcasting: wanted }, strictError).then(() => {
      strictBox.disabled = false;
      strictBox.checked = saved.strictBroadcasting;
      strictState.textContent = `${strictText}: ${saved.strictBroadcasting ? "on" : "off"}.`;
    });
  });
  const close = button("Close", "Close (Escape)", () => element.close());
  const element = el(
    "dialog",
    { class: "geon-dialog geon-about", "aria-label": "About this graph" },
    el("div", { class: "geon-about-head" }, canEdit ? titleInput : titleView, close),
    titleError,
    rendered,
    ...(canEdit
      ? [editing, descriptionError, editButton]
      : [
          el("p", {
            class: "muted small geon-about-readonly",
            text: "Only the graph's editors can change its title, description and settings.",
          }),
        ]),
    strictRow,
  );
  element.addEventListener("click", (e) => {
    if (e.target === element) element.close();
  });

  function show(): void {
    rendered.innerHTML = saved.description.trim() ? renderMarkdown(saved.description) : "";
    if (!saved.description.trim())
      rendered.append(el("p", { class: "muted", text: "No description yet." }));
    titleView.textContent = saved.title;
    strictBox.checked = saved.strictBroadcasting;
    strictState.textContent = `${strictText}: ${saved.strictBroadcasting ? "on" : "off"}.`;
    if (header) header.textContent = saved.title;
    document.title = `${saved.title} · geon`;
  }

  async function save(patch: Partial<About>, error: HTMLElement): Promise<boolean> {
    error.textContent = "";
    try {
      const answer = await api.update(patch);
      saved.title = answer.title;
      saved.description = answer.description;
      saved.strictBroadcasting = answer.strictBroadcasting;
      show();
      return true;
    } catch (e) {
      error.textContent = e instanceof ApiError ? e.message : String(e);
      return false;
    }
  }

  titleInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      if (titleInput.value === saved.title) return;
      titleInput.readOnly = true;
      void save({ title: titleInput.value }, titleError).then((ok) => {
        titleInput.readOnly = false;
        if (ok) titleInput.value = saved.title;
      });
    } else if (e.key === "Escape") {
      // put the saved title back; a second Escape (nothing to undo) closes the dialog
      if (titleInput.value === saved.title && !titleError.textContent) return;
      e.preventDefault();
      titleInput.value = saved.title;
      titleError.textContent = "";
    }
  });

  function startEditing(): void {
    textarea.value = saved.description;
    descriptionError.textContent = "";
    rendered.hidden = true;
    editButton.hidden = true;
    editing.hidden = false;
    textarea.focus();
  }

  function stopEditing(): void {
    rendered.hidden = false;
    editButton.hidden = false;
    editing.hidden = true;
    descriptionError.textContent = "";
  }

  async function saveDescription(): Promise<void> {
    saveButton.disabled = true;
    const ok = await save({ description: textarea.value }, descriptionError);
    saveButton.disabled = false;
    if (ok) stopEditing();
  }

  textarea.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void saveDescription();
    } else if (e.key === "Escape") {
      e.preventDefault();
      stopEditing();
    }
  });

  const open = (): void => {
    titleInput.value = saved.title;
    titleError.textContent = "";
    stopEditing();
    show();
    if (!element.open) element.showModal();
  };
  header?.addEventListener("click", open);
  document.querySelector(".graph-about-open")?.addEventListener("click", open);
  document.body.append(element);
  show();
  return { element, open };
}
