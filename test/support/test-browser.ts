import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it): playwright's own download cannot run here. */
export const CHROMIUM = "/usr/bin/chromium";

/** A headless chromium driven by playwright-core. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install chromium (.ci/run does)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, headless: true });
}

/** One request a page made, as it left the browser. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  resourceType: string;
}

/** Records every request `page` makes (URL, every header, body) into `into`. */
export function recordRequests(page: Page, into: RecordedRequest[]): void {
  page.on("request", (request) => {
    // Headers the network stack adds (cookies, say) are in allHeaders(), not headers().
    void request.allHeaders().then((headers) => {
      into.push({
        method: request.method(),
        url: request.url(),
        headers,
        body: request.postDataBuffer()?.toString("latin1") ?? "",
        resourceType: request.resourceType(),
      });
    });
  });
}
