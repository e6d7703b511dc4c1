// Downloads that say why they failed (issue 35: "every failed download, export or request says
// why on the page"). An <a download> that the server refuses saves the refusal as the file, or
// fails in the browser's download shelf, and the page says nothing; ``saveFrom`` fetches the
// file instead, saves it under the name the server gives, and answers the reason when it cannot.

import { el } from "./dom";

/** The file name a ``Content-Disposition`` answer gives (``attachment; filename="a.onnx"``), or null. */
export function fileNameOf(disposition: string | null): string | null {
  const found = /filename="([^"]+)"/.exec(disposition ?? "") ?? /filename=([^;\s]+)/.exec(disposition ?? "");
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
export async function saveFrom(href: string, fallback: string, what: string, saved?: (headers: Headers) => void): Promise<string | null> {
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
  const save = el("a", { href: url, download: fileNameOf(answer.headers.get("Content-Disposition")) ?? fallback, hidden: "" });
  document.body.append(save);
  save.click();
  save.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
  saved?.(answer.headers);
  return null;
}
