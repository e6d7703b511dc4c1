// The class page's script (templates/learn/class.html): the progress's "Download as CSV" link is
// an <a download> that works without script; with script it is fetched (issue 35: no silent
// failures), so a download the server refuses (the class no longer the teacher's, a lost session)
// says why under the link instead of in the browser's download shelf.

import { interceptDownloads } from "../ui/download";

function mount(root: HTMLElement): void {
  const failed = root.querySelector<HTMLElement>(".class-csv-error");
  if (!failed) return;
  interceptDownloads(
    root,
    "a.class-csv",
    () => "Download of the progress as CSV",
    (why) => {
      failed.textContent = why ?? "";
      failed.hidden = !why;
    },
  );
}

const root = document.querySelector<HTMLElement>("main.page");
if (root) mount(root);
