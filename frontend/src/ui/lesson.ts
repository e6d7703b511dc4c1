// The Lesson panel (issue 19, item 3): when the editor opens a lesson's copy of a graph
// (``?lesson=<key>&step=<n>``, from /learn/), the steps show at the top of the left side: the
// step's text (Markdown), its nodes selected on the canvas, Back / Next, and for a step with a
// task, Check, which asks the server whether the graph (as stored now) does what the task says.
// The URL follows the step, so a link reopens the lesson exactly there. On a try page (no
// account, teach/tryout.ts) the lesson comes from the page and Check sends the shown document.

import "./lesson.css";
import { answerAs, ApiError, json, RestClient } from "../api/client";

const checked = answerAs<{ passed: boolean; message: string }>();
import { button, el } from "./dom";
import { renderMarkdown } from "./markdown";
import type { LoomDocument } from "../model/document";
import type { TriedWork } from "../teach/tryout";

export interface LessonStep {
  title: string;
  text: string;
  highlight: string[];
  task: Record<string, unknown> | null;
}

export interface Lesson {
  key: string;
  title: string;
  summary: string;
  steps: LessonStep[];
}

/** Where a student goes after an item of a class (issue 36): the class and its next item. */
export interface After {
  class: { id: number; title: string; url: string } | null;
  next: { title: string; link: string } | null;
}

/** "Next: …" and "Back to class" links after a lesson or puzzle a class assigned (none when
 * no class of the person assigns it). */
export function afterLinks(after: After): HTMLElement[] {
  if (!after.class) return [];
  return [
    ...(after.next
      ? [
          el("a", {
            class: "geon-after-next",
            href: after.next.link,
            text: `Next: ${after.next.title} →`,
          }),
        ]
      : []),
    el("a", {
      class: "geon-after-class",
      href: after.class.url,
      text: `Back to class ${after.class.title}`,
    }),
  ];
}

/** The class links after ``kind`` ``key``, or none (a visitor, or a refusal: the panel works on). */
export async function loadAfter(
  api: LessonsApi,
  kind: "lesson" | "puzzle",
  key: string,
): Promise<HTMLElement[]> {
  try {
    return afterLinks(await api.after(kind, key));
  } catch {
    return [];
  }
}

export class LessonsApi extends RestClient {
  after(kind: "lesson" | "puzzle", key: string): Promise<After> {
    return answerAs<After>()(
      this.api.GET("/api/v1/classes/after/{kind}/{key}", { params: { path: { kind, key } } }),
    );
  }

  lesson(key: string): Promise<Lesson> {
    return answerAs<Lesson>()(this.api.GET("/api/v1/lessons/{key}", { params: { path: { key } } }));
  }

  check(key: string, step: number, graph: string): Promise<{ passed: boolean; message: string }> {
    return checked(
      this.api.POST("/api/v1/lessons/{key}/steps/{step}/check", {
        params: { path: { key, step } },
        body: { graph },
      }),
    );
  }

  /** A step's check on a document this browser keeps (no account needed; nothing stored). */
  checkDocument(
    key: string,
    step: number,
    document: LoomDocument,
  ): Promise<{ passed: boolean; message: string }> {
    return checked(
      this.api.POST("/api/v1/lessons/{key}/steps/{step}/try", {
        params: { path: { key, step } },
        body: { document: json(document) },
      }),
    );
  }
}

/** The step a URL asks for, within 1..count (a bad or missing one is 1). */
export function stepFromUrl(search: string, count: number): number {
  const n = Number(new URLSearchParams(search).get("step"));
  return Number.isInteger(n) && n >= 1 && n <= count ? n : 1;
}

export interface LessonOptions {
  graphId: string;
  csrf: string;
  /** On a try page: the lesson's key and the document to check (no graph is stored). */
  tryout?: TriedWork;
  /** Select the nodes with these labels on the canvas (those that exist). */
  select(labels: string[]): void;
}

/** Mount the panel when the page's URL (or try page) names a lesson; returns null otherwise. */
export async function mountLesson(options: LessonOptions): Promise<HTMLElement | null> {
  const key = options.tryout?.key ?? new URLSearchParams(location.search).get("lesson");
  if (!key) return null;
  const api = new LessonsApi(options.csrf);
  const element = el("section", { class: "geon-panel geon-lesson", "aria-label": "lesson" });
  document.querySelector(".geon-left")?.prepend(element);
  let lesson: Lesson;
  try {
    lesson = await api.lesson(key);
  } catch (e) {
    element.append(
      el("p", {
        class: "geon-form-error",
        role: "alert",
        text: e instanceof ApiError ? e.message : String(e),
      }),
    );
    return element;
  }
  let at = stepFromUrl(location.search, lesson.steps.length);
  const result = el("p", { class: "geon-lesson-result", role: "status" });

  const show = (): void => {
    const step = lesson.steps[at - 1]!;
    const url = new URL(location.href);
    url.searchParams.set("step", String(at));
    history.replaceState(null, "", url);
    const body = el("div", { class: "geon-lesson-text markdown" });
    body.innerHTML = renderMarkdown(step.text);
    result.textContent = "";
    result.className = "geon-lesson-result";
    const check = button(
      "Check",
      "Ask the server whether the graph does what this step asks",
      () => void run(),
      "primary geon-lesson-check",
    );
    const back = button("← Back", "The step before", () => go(-1), "geon-lesson-back");
    back.hidden = at === 1;
    element.replaceChildren(
      el("h2", { text: `Lesson · ${lesson.title}` }),
      el("p", {
        class: "geon-lesson-count muted small",
        text: `step ${at} of ${lesson.steps.length}`,
      }),
      el("h3", { class: "geon-lesson-title", text: step.title }),
      body,
      ...(step.task ? [check, result] : []),
      el(
        "div",
        { class: "geon-lesson-nav" },
        back,
        at < lesson.steps.length
          ? button("Next →", "The next step", () => go(1), "geon-lesson-next")
          : el("a", { class: "geon-lesson-done", href: "/learn/", text: "All lessons" }),
      ),
    );
    // after the last step, a class's next item and the way back to it (signed in only)
    if (at === lesson.steps.length && !options.tryout) {
      const shownAt = at;
      void loadAfter(api, "lesson", lesson.key).then((links) => {
        if (links.length && at === shownAt)
          element.append(el("div", { class: "geon-lesson-nav geon-after" }, ...links));
      });
    }
    if (step.highlight.length) options.select(step.highlight);
  };

  const go = (by: number): void => {
    at = Math.max(1, Math.min(lesson.steps.length, at + by));
    show();
  };

  const run = async (): Promise<void> => {
    result.textContent = "Checking…";
    try {
      const shown = options.tryout?.document();
      const answer = shown
        ? await api.checkDocument(lesson.key, at, shown)
        : await api.check(lesson.key, at, options.graphId);
      result.textContent = answer.message;
      result.className = `geon-lesson-result ${answer.passed ? "passed" : "failed"}`;
    } catch (e) {
      result.textContent = e instanceof ApiError ? e.message : String(e);
      result.className = "geon-lesson-result failed";
    }
  };

  show();
  return element;
}
