// "Import model" on the graph list (issue 20): an .onnx file is posted to POST /api/v1/imports,
// with the lengths typed beside it for the model's named dimensions ("batch=8, seq=16"), then its
// progress is polled at GET /api/v1/imports/<id> and shown under the buttons (the
// worker's step in words); the import stops in review with its axes (issue 35) and the rename
// step (importReview.ts) posts the names accepted, then the line links to the new graph and to its
// weights (.npz), and the list shows the new graph (``onImported``); a refusal,
// the server's or the worker's, is shown in words in the page's message line. A refused rename
// other than a bad name or a busy worker (an expired review, a lost connection) removes the
// form and frees the file input, saying why.

import { el } from "../ui/dom";
import { type ImportAxis, reviewForm } from "./importReview";
import { answerAs, ApiError, RestClient } from "../api/client";

/** A model import as the server answers it. */
export interface ModelImportJob {
  id: number;
  name: string;
  /** ``expired``: left in review past GEON_IMPORT_REVIEW_HOURS, its upload deleted (``error`` says so). */
  status: "queued" | "running" | "review" | "done" | "failed" | "expired";
  step: string;
  error: string;
  graph: string | null;
  weights: string | null;
  /** Whether it stops in review for the axes' names before the graph is made. */
  review: boolean;
  axes: ImportAxis[];
  /** The names accepted, by the axes' names as imported (null until they are). */
  names: Record<string, string> | null;
}

/** How often the page asks how an import is going, in milliseconds. */
export const POLL_MS = 400;

/** The line shown while an import converts. */
export function progressText(job: ModelImportJob): string {
  if (job.status === "queued") return `Importing ${job.name}: waiting for a worker…`;
  if (job.status === "running") return `Importing ${job.name}: ${job.step || "starting"}…`;
  if (job.status === "review") return `Read ${job.name}: name its axes, then create the graph.`;
  if (job.status === "done") return `Imported ${job.name}.`;
  // failed, or expired in review: the server's error says why either way
  return `${job.name} was not imported: ${job.error}`;
}

const job = answerAs<ModelImportJob>();

export class ImportsApi extends RestClient {
  /** Upload a model (refusals before any work: size, name, too many waiting). */
  start(file: File, dims = "", review = true): Promise<ModelImportJob> {
    const form = new FormData();
    form.append("model", file, file.name);
    if (dims) form.append("dims", dims);
    if (review) form.append("review", "true");
    // the typed body names the form's fields; the form itself goes (multipart, the browser's boundary)
    return job(
      this.api.POST("/api/v1/imports", {
        body: {
          model: file.name,
          ...(dims ? { dims } : {}),
          ...(review ? { review: "true" as const } : {}),
        },
        bodySerializer: () => form,
      }),
    );
  }

  /** Accept names for the axes of an import in review; it is queued again to make the graph. */
  names(id: number, names: Record<string, string>): Promise<ModelImportJob> {
    return job(
      this.api.POST("/api/v1/imports/{import_id}/names", {
        params: { path: { import_id: id } },
        body: { names },
      }),
    );
  }

  get(id: number): Promise<ModelImportJob> {
    return job(
      this.api.GET("/api/v1/imports/{import_id}", { params: { path: { import_id: id } } }),
    );
  }

  /** Poll until the import is done or failed, telling ``onUpdate`` each answer. */
  async follow(
    job: ModelImportJob,
    onUpdate: (job: ModelImportJob) => void,
    wait = (ms: number) => new Promise((r) => setTimeout(r, ms)),
  ): Promise<ModelImportJob> {
    let current = job;
    onUpdate(current);
    while (current.status === "queued" || current.status === "running") {
      await wait(POLL_MS);
      current = await this.get(current.id);
      onUpdate(current);
    }
    return current;
  }
}

/** What a refused ``POST /imports/<id>/names`` leaves: "keep" the form for a bad name (400) or
 * too many imports converting (429), both leaving the import in review; for anything else
 * (expired, no longer in review, the connection lost) the import read again once it is out of
 * review (an expired one's error says why), else the refusal ``error`` thrown. */
export async function afterRefusedNames(
  api: Pick<ImportsApi, "get">,
  id: number,
  error: unknown,
): Promise<"keep" | ModelImportJob> {
  if (error instanceof ApiError && (error.status === 400 || error.status === 429)) return "keep";
  let now: ModelImportJob;
  try {
    now = await api.get(id);
  } catch {
    throw error;
  }
  if (now.status === "review") throw error;
  return now;
}

/** Wire the "Import model" file input of the graph list; ``onImported`` runs once a graph is made. */
export function mountModelImport(
  root: HTMLElement,
  api: ImportsApi,
  message: HTMLElement,
  editorUrl: (id: string) => string,
  onImported: () => Promise<void>,
): void {
  const input = root.querySelector<HTMLInputElement>(".gallery-import-model");
  const dims = root.querySelector<HTMLInputElement>(".gallery-import-dims");
  const progress = root.querySelector<HTMLElement>(".gallery-import-progress");
  if (!input || !progress) return;
  const show = (job: ModelImportJob): void => {
    progress.dataset.status = job.status;
    const refused = job.status === "failed" || job.status === "expired";
    const parts: (Node | string)[] = [el("span", { text: refused ? "" : progressText(job) })];
    if (job.status === "done" && job.graph) {
      parts.push(
        " ",
        el("a", {
          href: editorUrl(job.graph),
          class: "gallery-import-open",
          text: `Open ${job.name.replace(/\.onnx$/i, "")}`,
        }),
      );
    }
    if (job.status === "done" && job.weights) {
      parts.push(
        " · ",
        el("a", {
          href: job.weights,
          download: "",
          class: "gallery-import-weights",
          text: "weights (.npz)",
        }),
      );
    }
    progress.replaceChildren(...parts);
    if (refused) message.textContent = progressText(job);
  };
  /** The rename step: the form under the progress line until the names are taken. */
  const rename = (waiting: ModelImportJob): Promise<ModelImportJob> =>
    new Promise((resolve, reject) => {
      const form = reviewForm(waiting.name, waiting.axes, (names) => {
        message.textContent = "";
        api.names(waiting.id, names).then(
          (queued) => {
            form.remove();
            api.follow(queued, show).then(resolve, reject);
          },
          (e: unknown) => {
            message.textContent = e instanceof ApiError ? e.message : String(e);
            void afterRefusedNames(api, waiting.id, e).then(
              (now) => {
                if (now === "keep") return;
                form.remove();
                api.follow(now, show).then(resolve, reject);
              },
              (why: unknown) => {
                form.remove();
                reject(why);
              },
            );
          },
        );
      });
      progress.after(form);
      form.querySelector<HTMLInputElement>(".gallery-import-name")?.focus();
    });
  input.addEventListener("change", () => {
    const file = input.files?.[0];
    if (!file) return;
    message.textContent = "";
    progress.replaceChildren();
    input.disabled = true;
    void (async () => {
      try {
        let job = await api.follow(await api.start(file, dims?.value.trim() ?? ""), show);
        if (job.status === "review") job = await rename(job);
        if (job.status === "done") await onImported();
      } catch (e) {
        message.textContent = e instanceof ApiError ? e.message : String(e);
      } finally {
        input.disabled = false;
        input.value = "";
      }
    })();
  });
}
