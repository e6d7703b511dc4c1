// The inbox of the Reviews page (templates/reviews/for_me.html): mark read, mute mail.
(() => {
  const token = document.querySelector("input[name=csrfmiddlewaretoken]")?.value ?? "";
  const shown = document.querySelector(".geon-inbox-error");
  async function send(method, path, body) {
    const answer = await fetch(`/api/v1/${path}`, {
      method, credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", "X-CSRFToken": token },
    });
    if (!answer.ok) {
      const why = await answer.json().catch(() => null);
      shown.textContent = why?.error?.message ?? `the server answered ${answer.status}; try again`;
      shown.hidden = false;
      return false;
    }
    return true;
  }
  document.querySelector(".geon-read-all")?.addEventListener("click", async () => {
    if (await send("POST", "notifications/read", { all: true })) location.reload();
  });
  document.querySelector(".geon-mail-toggle")?.addEventListener("change", async (event) => {
    if (!(await send("PATCH", "notifications/settings", { mail: event.target.checked }))) {
      event.target.checked = !event.target.checked;
    }
  });
  for (const row of document.querySelectorAll("li[data-notification].unread a")) {
    row.addEventListener("click", (event) => {
      event.preventDefault();
      const id = Number(row.closest("li").dataset.notification);
      send("POST", "notifications/read", { ids: [id] }).finally(() => { location.href = row.href; });
    });
  }
})();
