// The graph list page: New, Import (LoomGraph JSON; an ONNX model: ./modelImport.ts), and per
// graph Rename, Duplicate, Export, Delete, all through the REST API; the page reloads to show the result (the list itself is rendered by Django, the
// descriptions' Markdown here, with each graph's thumbnail and the search over the list).
// Export is an <a download> (it works without script); with script it is fetched (issue 35), so
// a graph deleted or unshared since the list was drawn says why in the page's message.

import { fetchRender } from "../ui/diagram";
import { renderMarkdown, renderMarkdownInline } from "../ui/markdown";
import { ApiError } from "../api/client";
import { interceptDownloads } from "../ui/download";
import { GraphsApi } from "../api/graphs";
import { aboutTitle, emptyDocument, importTitle, matches, parseImport } from "./page";
import { ImportsApi, mountModelImport } from "./modelImport";

/** The descriptions (Markdown text from the page) as HTML: summaries inline, full texts as blocks. */
function renderDescriptions(root: HTMLElement): void {
  for (const node of root.querySelectorAll<HTMLElement>("[data-markdown]")) {
    const text = node.textContent ?? "";
    node.innerHTML =
      node.dataset.markdown === "inline" ? renderMarkdownInline(text) : renderMarkdown(text);
    node.classList.add("markdown");
  }
}

/** Each graph's thumbnail: the worker's diagram of its current version (drawn once per version),
 * asked for when its row comes near the screen; a graph it cannot draw keeps no thumbnail. */
function loadThumbnails(root: HTMLElement): void {
  const show = async (img: HTMLImageElement): Promise<void> => {
    try {
      img.src = URL.createObjectURL(
        await fetchRender(`/api/v1/graphs/${img.dataset.thumb}/render.svg`, 30),
      );
      img.hidden = false;
    } catch {
      img.remove();
    }
  };
  // a hidden image has no box to intersect: watch its row
  const near = new IntersectionObserver(
    (entries) => {
      for (const entry of entries.filter((e) => e.isIntersecting)) {
        near.unobserve(entry.target);
        const img = entry.target.querySelector<HTMLImageElement>("img[data-thumb]");
        if (img) void show(img);
      }
    },
    { rootMargin: "200px" },
  );
  root.querySelectorAll<HTMLElement>("tr[data-graph]").forEach((row) => near.observe(row));
}

/** Descriptions, thumbnails and search of the list of graphs (drawn again by ``refreshList``). */
function mountList(list: HTMLElement): void {
  renderDescriptions(list);
  loadThumbnails(list);
  const search = list.querySelector<HTMLInputElement>(".graph-search");
  search?.addEventListener("input", () => {
    for (const row of list.querySelectorAll<HTMLElement>("tr[data-graph]")) {
      row.classList.toggle(
        "no-match",
        !matches(search.value, `${row.dataset.title ?? ""} ${row.textContent ?? ""}`),
      );
    }
  });
}

/** The list of graphs as the server draws it now, in place of the one shown (after an import
 * made a graph in the worker, so it appears without a reload); a list that cannot be fetched
 * says why in ``message`` (the graph was made: a reload shows it). */
async function refreshList(list: HTMLElement, message: HTMLElement): Promise<void> {
  const stale = (why: string) => {
    message.textContent = `The list of graphs could not be refreshed (${why}); reload the page to see the new graph.`;
  };
  let response: Response;
  try {
    response = await fetch(window.location.pathname, { headers: { Accept: "text/html" } });
  } catch (e) {
    return stale(`the server could not be reached: ${(e as Error).message}`);
  }
  if (!response.ok) return stale(`the server answered ${response.status}`);
  const fresh = new DOMParser()
    .parseFromString(await response.text(), "text/html")
    .querySelector<HTMLElement>(".gallery-list");
  if (!fresh) return stale("the page the server answered holds no list");
  list.replaceChildren(...Array.from(fresh.childNodes, (n) => document.importNode(n, true)));
  mountList(list);
}

function mount(root: HTMLElement): void {
  const list = root.querySelector<HTMLElement>(".gallery-list")!;
  mountList(list);
  const csrf =
    document.querySelector<HTMLInputElement>("input[name=csrfmiddlewaretoken]")?.value ?? "";
  const api = new GraphsApi(csrf);
  const message = root.querySelector<HTMLElement>(".gallery-message")!;
  const editorUrl = (id: string) => (root.dataset.editor ?? "/graphs/ID/").replace("ID", id);
  const attempt = async (work: () => Promise<void>): Promise<void> => {
    message.textContent = "";
    try {
      await work();
    } catch (e) {
      message.textContent = e instanceof ApiError ? e.message : String(e);
    }
  };

  const newForm = root.querySelector<HTMLFormElement>(".gallery-new")!;
  newForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const title = new FormData(newForm).get("title")?.toString() ?? "";
    void attempt(async () => {
      const g = await api.create(title, emptyDocument());
      window.location.assign(editorUrl(g.id));
    });
  });

  let exportFailure = "";
  interceptDownloads(
    root,
    "a[data-act=export]",
    (link) => `Export of "${link.closest<HTMLElement>("[data-graph]")?.dataset.title ?? ""}"`,
    (why) => {
      // a saved export clears only its own earlier failure, not an import's message
      if (why) message.textContent = why;
      else if (message.textContent === exportFailure) message.textContent = "";
      exportFailure = why ?? "";
    },
  );

  mountModelImport(root, new ImportsApi(csrf), message, editorUrl, () =>
    refreshList(list, message),
  );

  const file = root.querySelector<HTMLInputElement>(".gallery-import:not(.gallery-import-model)")!;
  file.addEventListener("change", () => {
    const f = file.files?.[0];
    if (!f) return;
    void attempt(async () => {
      const doc = parseImport(f.name, await f.text());
      // the title the file carries (an export's), else the file's name
      const g = await api.import(aboutTitle(doc) === null ? importTitle(f.name) : null, doc);
      window.location.assign(editorUrl(g.id));
    });
  });

  root.addEventListener("click", (e) => {
    const target = (e.target as HTMLElement).closest<HTMLButtonElement>("button[data-act]");
    if (!target) return;
    const row = target.closest<HTMLElement>("[data-graph]")!;
    const id = row.dataset.graph!;
    const title = row.dataset.title ?? "";
    switch (target.dataset.act) {
      case "rename": {
        const next = window.prompt("New title", title);
        if (next === null) return;
        void attempt(async () => {
          await api.rename(id, next);
          window.location.reload();
        });
        break;
      }
      case "duplicate":
        void attempt(async () => {
          await api.duplicate(id);
          window.location.reload();
        });
        break;
      case "delete":
        if (!window.confirm(`Delete "${title}"? This cannot be undone.`)) return;
        void attempt(async () => {
          await api.remove(id);
          window.location.reload();
        });
        break;
    }
  });
}

const root = document.getElementById("geon-gallery");
if (root) mount(root);
