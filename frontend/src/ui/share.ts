// The Share dialog (issue 17), opened by the Share button beside the presence avatars: the
// graph's people with their role (change it or remove them), invite by username or email
// (an unknown email gets an invitation link by mail), pending invitations, and "anyone with the
// link can view" (a revocable view-only link, with Copy). Everything goes through the REST API
// (/api/v1/graphs/<id>/members, /invitations, /links, /owner, /team); an error answer is shown in
// words. The owner may also hand the graph over to a member and give it to one of their teams.
// Role changes reach open editors by themselves (the websocket's `access` message).

import { button, el, submit } from "./dom";

export const ROLES = ["viewer", "reviewer", "editor", "owner"] as const;

export interface ShareOptions {
  graphId: string;
  csrf: string;
  me: string;
  fetcher?: typeof fetch;
}

interface Members {
  owner: string;
  members: { user: string; role: string }[];
  team: string | null;
}
interface Invitation {
  id: number;
  email: string;
  role: string;
}
interface Link {
  id: number;
  url: string;
}

/** The message of an API error answer (the envelope), or a fallback naming the status. */
export function errorText(body: unknown, status: number): string {
  const error = (body as { error?: { message?: string } } | null)?.error;
  return error?.message ?? `the server answered ${status}`;
}

/** What the dialog says after an invitation: a username is added, an email is invited. */
export function invitedText(who: string, status: string, role: string): string {
  return status === "added"
    ? `${who} is now ${/^[aeiou]/.test(role) ? "an" : "a"} ${role}`
    : `an invitation was sent to ${who} (if it is new to geon) as ${role}`;
}

export function createShareDialog(options: ShareOptions): {
  element: HTMLDialogElement;
  open(): Promise<void>;
} {
  const send =
    options.fetcher ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  const base = `/api/v1/graphs/${options.graphId}`;
  const request = async (method: string, url: string, body?: unknown): Promise<unknown> => {
    const response = await send(url, {
      method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": options.csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed: unknown = text ? JSON.parse(text) : null;
    if (!response.ok) throw new Error(errorText(parsed, response.status));
    return parsed;
  };
  /** ``path`` under the graph's API. */
  const call = (method: string, path: string, body?: unknown): Promise<unknown> =>
    request(method, `${base}${path}`, body);

  const dialog = el("dialog", { class: "geon-dialog geon-share", "aria-label": "Share" });
  const people = el("table", { class: "geon-share-people" });
  const pending = el("ul", { class: "geon-share-pending small" });
  const note = el("p", { class: "geon-share-note small", role: "status" });
  const who = el("input", {
    name: "who",
    placeholder: "username or email",
    "aria-label": "username or email",
    required: "",
  });
  const role = roleSelect("reviewer", "role of the invited person");
  const invite = el(
    "form",
    { class: "geon-share-invite" },
    who,
    role,
    submit("Invite", "Invite this person"),
  );
  const team = el("select", {
    class: "geon-share-team",
    "aria-label": "team the graph is given to",
  });
  team.addEventListener(
    "change",
    () =>
      void attempt(async () => {
        const answer = (await call("PUT", "/team", { team: team.value || null })) as {
          team: string | null;
        };
        say(
          answer.team
            ? `the members of team ${answer.team} now have their team role on the graph`
            : "the graph belongs to no team now",
        );
      }),
  );
  const linkBox = el("input", {
    type: "checkbox",
    class: "geon-share-link-toggle",
    id: "geon-share-link",
  });
  const linkUrl = el("input", {
    readonly: "",
    class: "geon-share-link-url",
    "aria-label": "view-only link",
  });
  const copy = button("Copy link", "Copy the link", () => void copyLink(), "geon-share-copy");
  let links: Link[] = [];

  const say = (text: string, error = false): void => {
    note.textContent = text;
    note.dataset.error = String(error);
  };
  const attempt = async (work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      say(error instanceof Error ? error.message : String(error), true);
    }
  };

  async function load(): Promise<void> {
    // everything the dialog shows is fetched first, so it never shows half of it
    const [members, teamList, invitationList, linkList] = await Promise.all([
      call("GET", "/members") as Promise<Members>,
      request("GET", "/api/v1/teams") as Promise<{ teams: { name: string }[] }>,
      call("GET", "/invitations") as Promise<{ invitations: Invitation[] }>,
      call("GET", "/links") as Promise<{ links: Link[] }>,
    ]);
    const rows = [
      el(
        "tr",
        {},
        el("td", { text: members.owner }),
        el("td", { text: "owner (owns the graph)" }),
        el("td"),
      ),
    ];
    for (const m of members.members) {
      const select = roleSelect(m.role, `role of ${m.user}`);
      select.addEventListener(
        "change",
        () =>
          void attempt(async () => {
            await call("PUT", `/members/${encodeURIComponent(m.user)}`, { role: select.value });
            say(`${m.user} is now ${select.value}`);
          }),
      );
      const remove = button(
        "Remove",
        `Remove ${m.user} from the graph`,
        () =>
          void attempt(async () => {
            await call("DELETE", `/members/${encodeURIComponent(m.user)}`);
            say(`${m.user} was removed`);
            await load();
          }),
        "geon-share-remove",
      );
      const handOver = button(
        "Make owner",
        `Hand the graph over to ${m.user}: they become its owner and you an editor`,
        () => {
          if (!window.confirm(handOverQuestion(m.user))) return;
          void attempt(async () => {
            await call("POST", "/owner", { username: m.user });
            say(`${m.user} owns the graph now; you are an editor`);
            dialog.close();
          });
        },
        "geon-share-owner",
      );
      const actions = members.owner === options.me ? [remove, handOver] : [remove];
      const row = el(
        "tr",
        {},
        el("td", { text: m.user === options.me ? `${m.user} (you)` : m.user }),
        el("td", {}, select),
        el("td", {}, ...actions),
      );
      row.dataset.user = m.user;
      rows.push(row);
    }
    people.replaceChildren(...rows);
    const teams = teamList.teams.map((t) => t.name);
    team.replaceChildren(
      ...teamOptions(teams, members.team).map(([value, text]) => el("option", { value, text })),
    );
    team.value = members.team ?? "";
    team.disabled = members.owner !== options.me;
    pending.replaceChildren(
      ...invitationList.invitations.map((i) =>
        el(
          "li",
          {},
          `${i.email} (${i.role}, invited) `,
          button(
            "Revoke",
            `Revoke the invitation of ${i.email}`,
            () =>
              void attempt(async () => {
                await call("DELETE", `/invitations/${i.id}`);
                await load();
              }),
            "link",
          ),
        ),
      ),
    );
    links = linkList.links;
    showLink();
  }

  function showLink(): void {
    linkBox.checked = links.length > 0;
    linkUrl.value = links[0]?.url ?? "";
    linkUrl.hidden = copy.hidden = links.length === 0;
  }

  async function copyLink(): Promise<void> {
    linkUrl.select();
    try {
      await navigator.clipboard.writeText(linkUrl.value);
      say("link copied");
    } catch {
      say("select the link and copy it (the browser refused the clipboard)");
    }
  }

  invite.addEventListener("submit", (event) => {
    event.preventDefault();
    void attempt(async () => {
      const answer = (await call("POST", "/invitations", {
        who: who.value.trim(),
        role: role.value,
      })) as { status: string };
      say(invitedText(who.value.trim(), answer.status, role.value));
      who.value = "";
      await load();
    });
  });
  linkBox.addEventListener(
    "change",
    () =>
      void attempt(async () => {
        if (linkBox.checked) {
          links = [(await call("POST", "/links")) as Link];
          say("anyone with the link can view the graph");
        } else {
          for (const link of links) await call("DELETE", `/links/${link.id}`);
          links = [];
          say("the link was turned off");
        }
        showLink();
      }),
  );

  dialog.append(
    el("h2", { text: "Share" }),
    people,
    el("p", { class: "geon-share-team-row small" }, el("label", { text: "Team: " }), team),
    el("h3", { class: "small", text: "Invite" }),
    invite,
    pending,
    el(
      "p",
      {},
      linkBox,
      el("label", { for: "geon-share-link", text: " Anyone with the link can view" }),
    ),
    el("p", {}, linkUrl, copy),
    note,
    el(
      "p",
      {},
      button("Done", "Close the dialog", () => dialog.close(), "primary geon-share-done"),
    ),
  );
  return {
    element: dialog,
    async open() {
      if (!dialog.isConnected) document.body.append(dialog);
      if (!dialog.open) dialog.showModal();
      say("");
      await attempt(load);
    },
  };
}

/** What the owner confirms before handing the graph over. */
export function handOverQuestion(user: string): string {
  return `Hand this graph over to ${user}? They become its owner (only they can delete it or hand it on) and you an editor.`;
}

/** The team choices: none, the person's teams, and the graph's own if it is not one of theirs. */
export function teamOptions(mine: string[], current: string | null): [string, string][] {
  const names = current !== null && !mine.includes(current) ? [current, ...mine] : mine;
  return [["", "no team"], ...names.map((n): [string, string] => [n, n])];
}

function roleSelect(current: string, label: string): HTMLSelectElement {
  const select = el("select", { "aria-label": label });
  for (const r of ROLES) {
    const option = el("option", { value: r, text: r });
    option.selected = r === current;
    select.append(option);
  }
  return select;
}
