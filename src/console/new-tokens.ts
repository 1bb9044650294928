// The "New tokens" boxes of the page; only a browser shows them.
// Tested by test/integration/console.test.ts.

import type { CreatedToken } from "@perps/token-client";
import { byId, create } from "./dom.js";

/** What a new token's box does with its buttons. */
export interface NewTokenActions {
  copy(token: string, field: HTMLTextAreaElement): void;
  /** After Dismiss took the box away. */
  dismissed(): void;
}

let shown = 0;

/** Grows a token's field to all of its lines, so no part of the token is scrolled out of sight. */
function fit(field: HTMLTextAreaElement): void {
  field.style.height = "auto";
  // The height in style counts the borders (border-box); scrollHeight does not.
  field.style.height = `${field.scrollHeight + field.offsetHeight - field.clientHeight}px`;
}

function fitAll(): void {
  for (const field of byId("new-tokens", HTMLDivElement).querySelectorAll("textarea")) {
    fit(field);
  }
}

// The field wraps the token: another width, another number of lines.
window.addEventListener("resize", fitAll);

/**
 * Shows a token just created, first in "New tokens", in a box of its own
 * that stays until its Dismiss button (or sign-out): a later create, failed
 * or not, takes no token away before the user had the chance to copy it.
 * Its field gets the focus, the token selected.
 */
export function showNewToken(name: string, created: CreatedToken, actions: NewTokenActions): void {
  shown += 1;
  const id = `new-token-${shown}`;
  const box = create("div");
  box.className = "created";
  box.setAttribute("role", "group");
  box.setAttribute("aria-labelledby", `${id}-label`);
  const label = create("label", `New token: ${name}`);
  label.id = `${id}-label`;
  label.htmlFor = id;
  const field = create("textarea");
  field.id = id;
  field.className = "token";
  field.readOnly = true;
  field.rows = 1;
  field.spellcheck = false;
  field.value = created.token;
  field.setAttribute("aria-describedby", `${id}-note`);
  const note = create(
    "p",
    `Expires on ${created.expiresAt} (UTC). Copy it now: it will not be shown again.`,
  );
  note.id = `${id}-note`;
  note.className = "warning";
  const copy = create("button", "Copy");
  copy.type = "button";
  copy.className = "primary";
  copy.setAttribute("aria-label", `Copy ${name}`);
  copy.addEventListener("click", () => actions.copy(field.value, field));
  const dismiss = create("button", "Dismiss");
  dismiss.type = "button";
  dismiss.setAttribute("aria-label", `Dismiss ${name}`);
  dismiss.addEventListener("click", () => {
    box.remove();
    actions.dismissed();
  });
  const buttons = create("div");
  buttons.className = "buttons";
  buttons.append(copy, dismiss);
  box.append(label, field, note, buttons);
  byId("new-tokens", HTMLDivElement).prepend(box);
  fit(field);
  field.focus();
  // Selected from the end backwards, so the field shows the token's start.
  field.setSelectionRange(0, field.value.length, "backward");
}

/** Takes every new token off the page (sign-out: nothing of the session stays behind). */
export function clearNewTokens(): void {
  byId("new-tokens", HTMLDivElement).replaceChildren();
}
