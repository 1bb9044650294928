// The token console: sign in with a key that never leaves this browser, then
// list, create and revoke tokens through the service's public REST contract.
// The page in a browser against a running service shows it.
// Tested by test/integration/console.test.ts, test/integration/console-failures.test.ts.
import type { TokenSummary } from "@perps/token-client";
import { type CreateGrants, createGrants } from "./create-grants.js";
import { byId } from "./dom.js";
import { errorText } from "./error-text.js";
import { generateKey, registrationCommand } from "./new-key.js";
import { clearNewTokens, showNewToken } from "./new-tokens.js";
import { confirmRevoke } from "./revoke-dialog.js";
import { type Session, signIn } from "./session.js";
import { renderTokens } from "./token-table.js";

const USER_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

const alertBox = byId("alert", HTMLDivElement);
const statusLine = byId("status", HTMLParagraphElement);
const signedOut = byId("signed-out", HTMLElement);
const signedIn = byId("signed-in", HTMLDivElement);
const who = byId("who", HTMLDivElement);
const userIdInput = byId("user-id", HTMLInputElement);
const keyFileInput = byId("key-file", HTMLInputElement);
const nameInput = byId("name", HTMLInputElement);
const lifetimeInput = byId("lifetime", HTMLInputElement);
const keyFilePointer = byId("key-file-pointer", HTMLParagraphElement);
const allowedIpsInput = byId("allowed-ips", HTMLInputElement);
const withdrawBox = byId("scope-withdraw", HTMLInputElement);
const scopeBoxes = [...document.querySelectorAll<HTMLInputElement>('#create input[name="scope"]')];

let session: Session | undefined;

/** What the User ID field says when it does not hold a user id; `purpose` ends the empty case. */
function userIdProblem(userId: string, purpose: string): Error {
  return new Error(
    userId === ""
      ? `User ID: enter your user id${purpose}`
      : `User ID: "${userId}" is not a user id: it is a UUID such as 0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab`,
  );
}
/** The generated private key, as a blob: URL that only this page can read, until the next key. */
let downloadUrl: string | undefined;
let downloadName = "perps-key.pem";

function say(text: string): void {
  alertBox.textContent = "";
  statusLine.textContent = text;
}

function fail(context: string, err: unknown): void {
  statusLine.textContent = "";
  alertBox.textContent = `${context}: ${errorText(err)}`;
}

/** Runs `action` with `button` disabled, reporting a failure as `context`. */
async function busy(button: HTMLButtonElement, context: string, action: () => Promise<void>) {
  button.disabled = true;
  alertBox.textContent = "";
  statusLine.textContent = "";
  try {
    await action();
  } catch (err) {
    fail(context, err);
  } finally {
    button.disabled = false;
  }
}

function showSignedIn(userId: string | undefined): void {
  signedOut.hidden = userId !== undefined;
  signedIn.hidden = userId === undefined;
  who.hidden = userId === undefined;
  byId("who-user", HTMLElement).textContent = userId ?? "";
  if (userId === undefined) {
    // Nothing of the signed-in page stays behind, above all the tokens shown once.
    clearNewTokens();
    renderTokens([], () => {});
    resetGrants();
  }
}

async function refresh(current: Session): Promise<void> {
  renderTokens(await current.list(), (token) => void revoke(current, token));
}

async function revoke(current: Session, token: TokenSummary): Promise<void> {
  if (!(await confirmRevoke(token.name))) {
    return;
  }
  const buttons = [...document.querySelectorAll<HTMLButtonElement>("button.revoke")];
  const index = buttons.findIndex((b) => b.closest("tr")?.dataset.tokenId === token.id);
  const button = buttons[index];
  if (button === undefined) {
    return;
  }
  await busy(button, `Revoke ${token.name} failed`, async () => {
    await current.revoke(token.id);
    await refresh(current);
    say(`Revoked ${token.name}.`);
    // Focus stays in the list: on the row that took this one's place, else the form.
    const next = document.querySelectorAll<HTMLButtonElement>("button.revoke")[index];
    (next ?? nameInput).focus();
  });
}

byId("sign-in", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  const button = byId("sign-in-button", HTMLButtonElement);
  void busy(button, "Sign in failed", async () => {
    const userId = userIdInput.value.trim();
    const file = keyFileInput.files?.[0];
    if (!USER_ID.test(userId)) {
      userIdInput.focus();
      throw userIdProblem(userId, ", a UUID such as 0b3c4d5e-1f2a-4b4c-8d9e-0123456789ab");
    }
    if (file === undefined) {
      keyFileInput.focus();
      throw new Error("Private key: choose your private key file (PEM)");
    }
    const keyFile = new Uint8Array(await file.arrayBuffer());
    const current = await signIn({ baseUrl: location.origin, userId, keyFile });
    session = current;
    // The file is read: the input lets go of it.
    keyFileInput.value = "";
    pointToKeyFile(undefined);
    showSignedIn(userId);
    await refresh(current);
    nameInput.focus();
  });
});

byId("create", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  const current = session;
  if (current === undefined) {
    return;
  }
  void busy(byId("create-button", HTMLButtonElement), "Create failed", async () => {
    const name = nameInput.value;
    const days = Number(lifetimeInput.value);
    if (name === "") {
      nameInput.focus();
      throw new Error("Name: give the token a name");
    }
    if (!Number.isInteger(days) || days < 1) {
      lifetimeInput.focus();
      throw new Error("Lifetime: a whole number of days, 1 or more");
    }
    const checked = scopeBoxes.filter((box) => box.checked).map((box) => box.value);
    let grants: CreateGrants;
    try {
      grants = createGrants(checked, allowedIpsInput.value);
    } catch (err) {
      const addresses = err instanceof Error && err.message.startsWith("Allowed addresses");
      (addresses ? allowedIpsInput : (scopeBoxes[0] ?? nameInput)).focus();
      throw err;
    }
    const token = await current.create(name, days, grants);
    nameInput.value = "";
    resetGrants();
    say(`Created ${name}, expiring on ${token.expiresAt} (UTC).`);
    showNewToken(name, token, {
      copy: (text, field) => void copy(text, field, "Token"),
      dismissed: () => nameInput.focus(),
    });
    await refresh(current);
  });
});

/** withdraw is offered only with an address to bind it to: greyed (and unticked) while there is none. */
function offerWithdraw(): void {
  const none = allowedIpsInput.value.trim() === "";
  withdrawBox.disabled = none;
  if (none) {
    withdrawBox.checked = false;
  }
}
allowedIpsInput.addEventListener("input", offerWithdraw);

/** Back to what a new token gets unless asked otherwise: the next one inherits no withdraw by accident. */
function resetGrants(): void {
  for (const box of scopeBoxes) {
    box.checked = box.defaultChecked;
  }
  allowedIpsInput.value = "";
  offerWithdraw();
}

async function copy(text: string, field: HTMLElement | undefined, what: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    say(`${what} copied.`);
  } catch {
    if (field instanceof HTMLInputElement || field instanceof HTMLTextAreaElement) {
      field.select();
    }
    say(
      `Select the ${what.toLowerCase()} and copy it with Ctrl+C (the clipboard is not available).`,
    );
  }
}

/**
 * Highlights Private key with a line naming `fileName`, the key file just
 * downloaded, until a file is chosen there; undefined takes both away.
 */
function pointToKeyFile(fileName: string | undefined): void {
  keyFilePointer.textContent =
    fileName === undefined ? "" : `Choose ${fileName} here: the private key you downloaded.`;
  keyFilePointer.hidden = fileName === undefined;
  keyFileInput.classList.toggle("next-step", fileName !== undefined);
}

keyFileInput.addEventListener("change", () => {
  if ((keyFileInput.files?.length ?? 0) > 0) {
    pointToKeyFile(undefined);
  }
});

byId("sign-out", HTMLButtonElement).addEventListener("click", () => {
  const current = session;
  if (current === undefined) {
    return;
  }
  // Forgotten first: whatever the service answers, this page holds no key any more.
  session = undefined;
  showSignedIn(undefined);
  userIdInput.focus();
  current.signOut().then(
    () => say("Signed out: the session token is deleted and the key forgotten."),
    (err: unknown) =>
      fail(
        "Signed out here, but the session token could not be deleted (it expires within 15 minutes)",
        err,
      ),
  );
});

byId("generate", HTMLButtonElement).addEventListener("click", (event) => {
  const button = event.currentTarget;
  if (!(button instanceof HTMLButtonElement)) {
    return;
  }
  void busy(button, "Generate key failed", async () => {
    const userId = userIdInput.value.trim();
    if (!USER_ID.test(userId)) {
      userIdInput.focus();
      throw userIdProblem(userId, " first: the registration names it");
    }
    const key = await generateKey();
    if (downloadUrl !== undefined) {
      URL.revokeObjectURL(downloadUrl);
    }
    downloadUrl = URL.createObjectURL(
      new Blob([key.privateKeyPem], { type: "application/x-pem-file" }),
    );
    downloadName = `perps-key-${userId.slice(0, 8)}.pem`;
    const download = byId("download", HTMLButtonElement);
    byId("public-key", HTMLInputElement).value = key.publicKeyHex;
    byId("register-command", HTMLPreElement).textContent = registrationCommand(
      userId,
      key.publicKeyHex,
    );
    byId("generated", HTMLDivElement).hidden = false;
    say("Key generated: download the private key, then have the public key registered.");
    download.focus();
  });
});

byId("download", HTMLButtonElement).addEventListener("click", () => {
  if (downloadUrl === undefined) {
    return;
  }
  const link = document.createElement("a");
  link.href = downloadUrl;
  link.download = downloadName;
  link.click();
  pointToKeyFile(downloadName);
  say(
    `Downloaded ${downloadName}: once the public key is registered, choose that file under Private key and sign in.`,
  );
});

byId("choose-key", HTMLButtonElement).addEventListener("click", () => {
  keyFileInput.scrollIntoView({ block: "center" });
  keyFileInput.focus();
  try {
    keyFileInput.showPicker();
  } catch {
    // A browser that will not open it from here: the input has the focus, one key press away.
  }
});

byId("copy-command", HTMLButtonElement).addEventListener("click", () => {
  void copy(byId("register-command", HTMLPreElement).textContent ?? "", undefined, "Command");
});

if (!window.isSecureContext || globalThis.crypto?.subtle === undefined) {
  alertBox.textContent =
    "This page needs HTTPS (or http://localhost): browsers offer the signing it does (WebCrypto) only there.";
  byId("sign-in-button", HTMLButtonElement).disabled = true;
  byId("generate", HTMLButtonElement).disabled = true;
}
