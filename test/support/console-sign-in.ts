import type { Page } from "playwright-core";

// The token console's sign-in as a user does it: console*.test.ts and the README's walkthrough
// (readme-examples.test.ts), which has no other use for the console's fixtures.

export async function signIn(page: Page, userId: string, keyPath: string): Promise<void> {
  await page.getByRole("textbox", { name: "User ID" }).fill(userId);
  await page.getByLabel("Private key").setInputFiles(keyPath);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Resolves once the page shows the signed-in state (its Sign out button). */
export async function signedIn(page: Page): Promise<void> {
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}
