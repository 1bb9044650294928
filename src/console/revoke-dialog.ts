import { byId } from "./dom.js";

/**
 * Asks in the page (a modal <dialog>, not window.confirm) whether to revoke
 * the token named `name`; resolves true only for the Revoke button. Escape
 * and Cancel answer false. Focus returns to where it was.
 */
export function confirmRevoke(name: string): Promise<boolean> {
  const dialog = byId("revoke-dialog", HTMLDialogElement);
  const confirm = byId("revoke-confirm", HTMLButtonElement);
  const cancel = byId("revoke-cancel", HTMLButtonElement);
  byId("revoke-title", HTMLHeadingElement).textContent = `Revoke ${name}?`;
  return new Promise((resolve) => {
    const onConfirm = () => dialog.close("revoke");
    const onCancel = () => dialog.close("cancel");
    confirm.addEventListener("click", onConfirm);
    cancel.addEventListener("click", onCancel);
    dialog.addEventListener(
      "close",
      () => {
        confirm.removeEventListener("click", onConfirm);
        cancel.removeEventListener("click", onCancel);
        resolve(dialog.returnValue === "revoke");
      },
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    // The safe choice has the focus: Enter right away cancels.
    cancel.focus();
  });
}
