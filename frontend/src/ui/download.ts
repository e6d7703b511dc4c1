// Downloads that say why they failed (issue 35: "every failed download, export or request says
// why on the page"). An <a download> that the server refuses saves the refusal as the file, or
// fails in the browser's download shelf, and the page says nothing; ``saveFrom`` fetches the
// file instead, saves it under the name the server gives, and answers the reason when it cannot.

import { el } from "./dom";

/** The file name a ``Content-Disposition`` answer gives (``attachment; filename="a.onnx"``), or null. */
export function fileNameOf(disposition: string | null): string | null {
  const found =
    /filename="([^"]+)"/.exec(disposition ?? "") ?? /filename=([^;\s]+)/.exec(disposition ?? "");
  return found ? found[1]! : null;
}

/** Why ``what`` failed, as the page says it: the server's JSON ``error.message`` when it sent one,
 * else its status — "Export as ONNX failed: …". */
export function failureText(what: string, status: number, body: unknown): string {
  const said = (body as { error?: { message?: unknown } } | null)?.error?.message;
  return `${what} failed: ${typeof said === "string" && said ? said : `the server answered ${status}`}`;
}

/** Fetch ``href`` and save it under the server's file name (else ``fallback``); null when saved,
 * else why ``what`` failed. ``saved`` reads the answer's headers once the file is saved (the
 * export's notice). */
export async function saveFrom(
  href: string,
  fallback: string,
  what: string,
  saved?: (headers: Headers) => void,
): Promise<string | null> {
  let answer: Response;
  let blob: Blob;
  try {
    answer = await fetch(href, { credentials: "same-origin" });
    if (!answer.ok) return failureText(what, answer.status, await answer.json().catch(() => null));
    blob = await answer.blob();
  } catch (e) {
    // no answer, or the connection lost while the file came
    return `${what} failed: the server could not be reached (${(e as Error).message})`;
  }
  const url = URL.createObjectURL(blob);
  const save = el("a", {
    href: url,
    download: fileNameOf(answer.headers.get("Content-Disposition")) ?? fallback,
    hidden: "",
  });
  document.body.append(save);
  save.click();
  save.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
  saved?.(answer.headers);
  return null;
}

/** Whether a click on a download link is the page's to handle: a plain left click. A click with a
 * modifier (open in a new tab, save the link as) or another button is left to the browser. */
export function plainClick(
  e: Pick<
    MouseEvent,
    "button" | "ctrlKey" | "metaKey" | "shiftKey" | "altKey" | "defaultPrevented"
  >,
): boolean {
  return (
    !e.defaultPrevented && e.button === 0 && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.altKey
  );
}

/** The name a download link's file is saved under when the server gives none: its ``download``
 * attribute, else the last part of its path. */
export function linkFileName(download: string | null, href: string): string {
  return (
    download?.trim() ||
    decodeURIComponent(new URL(href, "http://x/").pathname.split("/").pop() || "") ||
    "download"
  );
}

/** Progressive enhancement of the ``<a download>`` links under ``root`` matching ``selector``
 * (issue 35): without script the link downloads as the browser does; with it a plain click
 * fetches the file by ``saveFrom`` and ``said(why, link)`` is answered with why it failed, or
 * null once saved. ``what(link)`` names the download for the page ("Export of "MLP""). One
 * listener on ``root``, so links drawn into it later are handled too. */
export function interceptDownloads(
  root: HTMLElement,
  selector: string,
  what: (link: HTMLAnchorElement) => string,
  said: (why: string | null, link: HTMLAnchorElement) => void,
): void {
  root.addEventListener("click", (e) => {
    const link = (e.target as Element | null)?.closest<HTMLAnchorElement>(selector);
    if (!link || !root.contains(link) || !plainClick(e)) return;
    e.preventDefault();
    void saveFrom(
      link.href,
      linkFileName(link.getAttribute("download"), link.href),
      what(link),
    ).then((why) => said(why, link));
  });
}
