// The page's "Revoke?" dialog; only a browser shows it.
// Tested by test/integration/console.test.ts.

import { byId } from "./dom.js";

/** The answer the open dialog is waiting for; undefined while it is closed. */
let pending: ((revoke: boolean) => void) | undefined;
let wired = false;

function settle(revoke: boolean): void {
  const answer = pending;
  pending = undefined;
  answer?.(revoke);
}

// Answered on the click or key itself, not on the dialog's "close" event:
// that event comes a task later, and may come after the dialog was opened
// again (Escape, then Enter on the Revoke button at once).
function wire(dialog: HTMLDialogElement): void {
  byId("revoke-confirm", HTMLButtonElement).addEventListener("click", () => {
    settle(true);
    dialog.close();
  });
  byId("revoke-cancel", HTMLButtonElement).addEventListener("click", () => {
    settle(false);
    dialog.close();
  });
  // Escape.
  dialog.addEventListener("cancel", () => settle(false));
  dialog.addEventListener("close", () => {
    if (!dialog.open) {
      settle(false);
    }
  });
  wired = true;
}

/**
 * Asks in the page (a modal <dialog>, not window.confirm) whether to revoke
 * the token named `name`; resolves true only for the Revoke button. Escape
 * and Cancel answer false. Focus returns to where it was.
 */
export function confirmRevoke(name: string): Promise<boolean> {
  const dialog = byId("revoke-dialog", HTMLDialogElement);
  if (!wired) {
    wire(dialog);
  }
  // One question at a time: a second one while the dialog is open is declined.
  if (dialog.open) {
    return Promise.resolve(false);
  }
  byId("revoke-title", HTMLHeadingElement).textContent = `Revoke ${name}?`;
  return new Promise((resolve) => {
    pending = resolve;
    dialog.showModal();
    // The safe choice has the focus: Enter right away cancels.
    byId("revoke-cancel", HTMLButtonElement).focus();
  });
}
