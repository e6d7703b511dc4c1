// The "Write a lesson" panel (issue 19, item 3): on a graph the person may edit, the lesson
// written on it — a title, a summary and steps, each a title, Markdown text, the nodes it
// highlights (the selection's labels: "Use selection") and an optional task the server checks
// (a tensor's axes, a kernel used, no errors left) — saved with ``PUT /api/v1/graphs/<id>/lesson``.
// Once saved, the panel links to the lesson as a student opens it and to the link for anyone.

import "./lesson.css";
import { answerAs, ApiError, GraphRestClient } from "../api/client";
import { button, el } from "./dom";

export interface Task {
  tensor?: string;
  axes?: string[];
  kernel?: string;
  writtenBy?: string;
  clean?: boolean;
}

export interface WrittenStep {
  title: string;
  text: string;
  highlight: string[];
  task: Task | null;
}

export interface Written {
  key: string;
  title: string;
  summary: string;
  steps: WrittenStep[];
  links: { open: string; try: string };
}

/** What the task fields say: a tensor and its axes, a kernel used, no errors. */
export interface TaskForm {
  tensor: string;
  axes: string;
  kernel: string;
  clean: boolean;
}

/** The task a step's fields describe (null: no task). */
export function taskFromForm(form: TaskForm): Task | null {
  const task: Task = {};
  const axes = form.axes
    .split(",")
    .map((a) => a.trim())
    .filter(Boolean);
  if (form.tensor.trim()) Object.assign(task, { tensor: form.tensor.trim(), axes });
  if (form.kernel.trim()) task.kernel = form.kernel.trim();
  if (form.clean) task.clean = true;
  return Object.keys(task).length ? task : null;
}

/** A step's task as its fields show it. */
export function taskToForm(task: Task | null): TaskForm {
  return {
    tensor: task?.tensor ?? "",
    axes: (task?.axes ?? []).join(", "),
    kernel: task?.kernel ?? "",
    clean: task?.clean ?? false,
  };
}

export class LessonWriterApi extends GraphRestClient {
  /** The lesson written on the graph, or null. */
  async get(): Promise<Written | null> {
    return (
      await answerAs<{ lesson: Written | null }>()(
        this.api.GET("/api/v1/graphs/{graph_id}/lesson", {
          params: { path: this.graph },
        }),
      )
    ).lesson;
  }

  put(lesson: Pick<Written, "title" | "summary" | "steps">): Promise<Written> {
    return answerAs<Written>()(
      this.api.PUT("/api/v1/graphs/{graph_id}/lesson", {
        params: { path: this.graph },
        body: lesson,
      }),
    );
  }
}

const blankStep = (): WrittenStep => ({ title: "", text: "", highlight: [], task: null });

export interface WriterOptions {
  graphId: string;
  csrf: string;
  /** The labels of the nodes selected on the canvas. */
  selectedLabels(): string[];
}

/** The panel, closed until opened (its lesson is read then). */
export function createLessonWriter(options: WriterOptions): HTMLDetailsElement {
  const api = new LessonWriterApi(options.csrf, options.graphId);
  const element = el("details", { class: "geon-panel geon-writer" }) as HTMLDetailsElement;
  const body = el("div", { class: "geon-writer-body" });
  const said = el("p", { class: "geon-writer-said small", role: "status" });
  element.append(el("summary", { text: "Write a lesson" }), body);
  let lesson: Pick<Written, "title" | "summary" | "steps"> = {
    title: "",
    summary: "",
    steps: [blankStep()],
  };
  let saved: Written | null = null;
  let loaded = false;

  const field = (
    label: string,
    input: HTMLInputElement | HTMLTextAreaElement,
    set: (v: string) => void,
  ): HTMLElement => {
    input.addEventListener("input", () => set(input.value));
    return el(
      "label",
      { class: "geon-writer-field" },
      el("span", { class: "small muted", text: label }),
      input,
    );
  };

  const stepEditor = (step: WrittenStep, n: number): HTMLElement => {
    const form = taskToForm(step.task);
    const setTask = (patch: Partial<TaskForm>) => {
      Object.assign(form, patch);
      step.task = taskFromForm(form);
    };
    const highlight = el("span", {
      class: "geon-writer-highlight small",
      text: step.highlight.join(", ") || "nothing",
    });
    const clean = el("input", { type: "checkbox" });
    clean.checked = form.clean;
    clean.addEventListener("change", () => setTask({ clean: clean.checked }));
    const move = (by: number) => {
      const [moved] = lesson.steps.splice(n, 1);
      lesson.steps.splice(Math.max(0, Math.min(lesson.steps.length, n + by)), 0, moved!);
      render();
    };
    return el(
      "fieldset",
      { class: "geon-writer-step" },
      el("legend", { text: `Step ${n + 1}` }),
      field(
        "Title",
        el("input", { value: step.title, class: "geon-writer-step-title" }),
        (v) => (step.title = v),
      ),
      field(
        "Text (Markdown)",
        Object.assign(el("textarea", { rows: "3", class: "geon-writer-text" }), {
          value: step.text,
        }),
        (v) => (step.text = v),
      ),
      el(
        "div",
        { class: "geon-writer-row" },
        el("span", { class: "small muted", text: "Highlights: " }),
        highlight,
        button(
          "Use selection",
          "Highlight the nodes selected on the canvas at this step",
          () => {
            step.highlight = options.selectedLabels();
            highlight.textContent = step.highlight.join(", ") || "nothing";
          },
          "geon-writer-use-selection",
        ),
      ),
      el("p", {
        class: "small muted geon-writer-task-note",
        text: "Task (optional): the student's graph must have…",
      }),
      field(
        "tensor",
        el("input", { value: form.tensor, placeholder: "label", class: "geon-writer-tensor" }),
        (v) => setTask({ tensor: v }),
      ),
      field(
        "with the axes",
        el("input", { value: form.axes, placeholder: "H, W-1", class: "geon-writer-axes" }),
        (v) => setTask({ axes: v }),
      ),
      field(
        "an operation using",
        el("input", {
          value: form.kernel,
          placeholder: "op:cast_axes",
          class: "geon-writer-kernel",
        }),
        (v) => setTask({ kernel: v }),
      ),
      el("label", { class: "geon-writer-row small" }, clean, " and no errors left"),
      el(
        "div",
        { class: "geon-writer-row" },
        button("↑", "Move this step up", () => move(-1)),
        button("↓", "Move this step down", () => move(1)),
        button("Remove", "Remove this step", () => {
          lesson.steps.splice(n, 1);
          if (!lesson.steps.length) lesson.steps.push(blankStep());
          render();
        }),
      ),
    );
  };

  const links = (): HTMLElement[] =>
    saved
      ? [
          el(
            "p",
            { class: "small geon-writer-links" },
            el("a", { href: saved.links.open, target: "_blank", text: "Open as a student" }),
            " · ",
            el("a", {
              href: saved.links.try,
              target: "_blank",
              text: "Link for anyone (no account needed)",
            }),
          ),
        ]
      : [];

  const save = async (): Promise<void> => {
    said.className = "geon-writer-said small";
    said.textContent = "Saving…";
    try {
      saved = await api.put(lesson);
      said.textContent = `Saved: ${saved.steps.length} step${saved.steps.length === 1 ? "" : "s"}. Assign it to a class from its page.`;
      render();
    } catch (e) {
      said.className = "geon-writer-said small geon-form-error";
      said.textContent = e instanceof ApiError ? e.message : String(e);
    }
  };

  function render(): void {
    body.replaceChildren(
      el("p", {
        class: "small muted",
        text: "A lesson on this graph: students open their own copy of it and step through what you write here.",
      }),
      field(
        "Lesson title",
        el("input", { value: lesson.title, class: "geon-writer-title" }),
        (v) => (lesson.title = v),
      ),
      field(
        "Summary",
        Object.assign(el("textarea", { rows: "2", class: "geon-writer-summary" }), {
          value: lesson.summary,
        }),
        (v) => (lesson.summary = v),
      ),
      ...lesson.steps.map(stepEditor),
      el(
        "div",
        { class: "geon-writer-row" },
        button(
          "Add step",
          "Add a step at the end",
          () => {
            lesson.steps.push(blankStep());
            render();
          },
          "geon-writer-add",
        ),
        button(
          "Save lesson",
          "Save the lesson (students see it at once)",
          () => void save(),
          "primary geon-writer-save",
        ),
      ),
      said,
      ...links(),
    );
  }

  element.addEventListener("toggle", () => {
    if (!element.open || loaded) return;
    loaded = true;
    render();
    api.get().then(
      (found) => {
        if (!found) return;
        saved = found;
        lesson = { title: found.title, summary: found.summary, steps: found.steps };
        render();
      },
      (e: unknown) => (said.textContent = e instanceof ApiError ? e.message : String(e)),
    );
  });
  return element;
}
