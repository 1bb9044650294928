import { execFile } from "node:child_process";
import { createPublicKey } from "node:crypto";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";

// The consumer scripts package.test.ts runs in a project that installed the
// packed client, and what they print.

const run = promisify(execFile);

/** What a Node consumer script prints: per transport, what it made and saw. */
export interface NodeOutcome {
  sameErrorClass: boolean;
  transports: Record<
    string,
    {
      id: string;
      wellFormed: boolean;
      listed: { id: string; name: string; expiresAt: string }[];
      refusal: { isTokenApiError: boolean; code: number; httpStatus?: number };
    }
  >;
}

// The body both Node consumers share; ESM and CJS differ only in how they load the SDK.
export const NODE_BODY = `
  const { BASE_URL, USER_ID, KEY_FILE, NAME } = process.env;
  const signer = signerFromPem(readFileSync(KEY_FILE));
  const transports = {};
  for (const transport of ["rest", "grpc"]) {
    const client = createTokenClient({ baseUrl: BASE_URL, transport, signer });
    try {
      const created = await client.createToken({
        userId: USER_ID,
        name: NAME + "-" + transport,
        expiresIn: 3600,
      });
      const listed = await client.listTokens(created.token);
      let refusal;
      try {
        await client.deleteToken({ userId: USER_ID, tokenId: "AAAAAAAAAAAAAAAA" });
      } catch (err) {
        refusal = { isTokenApiError: err instanceof TokenApiError, code: err.code, httpStatus: err.httpStatus };
      }
      transports[transport] = { id: created.id, wellFormed: isWellFormedToken(created.token), listed, refusal };
    } finally {
      client.close();
    }
  }
  console.log(JSON.stringify({ sameErrorClass: TokenApiError === NodeTokenApiError, transports }));
`;

export const ESM_CONSUMER = `import { readFileSync } from "node:fs";
import { createTokenClient, signerFromPem, TokenApiError } from "@perps/token-client";
import { isWellFormedToken, TokenApiError as NodeTokenApiError } from "@perps/token-client/node";
${NODE_BODY}`;

export const CJS_CONSUMER = `"use strict";
const { readFileSync } = require("node:fs");
const { createTokenClient, signerFromPem, TokenApiError } = require("@perps/token-client");
const { isWellFormedToken, TokenApiError: NodeTokenApiError } = require("@perps/token-client/node");
async function main() {
${NODE_BODY}
}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`;

// Run in a page: what it returns is JSON text, as objects of the page's realm
// would not compare equal to this one's. `createTokenClient` and
// `signerFromPem` come from the SDK however the page loaded it.
export const BROWSER_BODY = `async ({ baseUrl, userId, pem, prefix }) => {
  const signer = signerFromPem(pem);
  const out = { globals: [typeof process, typeof Buffer] };
  for (const transport of ["rest", "connect"]) {
    const client = createTokenClient({ baseUrl, transport, signer });
    const created = await client.createToken({ userId, name: prefix + transport, expiresIn: 3600 });
    out[transport] = { id: created.id, listed: await client.listTokens(created.token) };
    client.close();
  }
  const grpc = createTokenClient({ baseUrl, transport: "grpc", signer });
  out.grpc = await grpc.createToken({ userId, name: prefix + "grpc" }).then(() => "created", (err) => err.message);
  return JSON.stringify(out);
}`;

/** A page's script bundled by the page's own bundler from the installed package. */
export const BROWSER_CONSUMER = `import { createTokenClient, signerFromPem } from "@perps/token-client";
globalThis.runConsumer = ${BROWSER_BODY};
`;

/** A page with the shipped classic-script build: the SDK is the global PerpsTokenClient. */
export const GLOBAL_CONSUMER = `const { createTokenClient, signerFromPem } = PerpsTokenClient;
globalThis.runConsumer = ${BROWSER_BODY};
`;

/** What a page offers a script: no process, no Buffer, no require. */
export function pageGlobals(): Record<string, unknown> {
  return {
    fetch,
    Headers,
    Request,
    Response,
    AbortController,
    AbortSignal,
    DOMException,
    TextEncoder,
    TextDecoder,
    URL,
    URLSearchParams,
    crypto: globalThis.crypto,
    atob,
    btoa,
    setTimeout,
    clearTimeout,
    queueMicrotask,
    console,
  };
}

export type BrowserOutcome = {
  globals: string[];
  grpc: string;
} & Record<"rest" | "connect", { id: string; listed: { id: string; name: string }[] }>;

export const TYPED_ESM = `import {
  Code,
  type CreatedToken,
  createTokenClient,
  signerFromPem,
  TokenApiError,
  type TokenClient,
  type TokenSummary,
} from "@perps/token-client";
import { createIntrospectionClient, isWellFormedToken } from "@perps/token-client/node";

declare const pem: string;
const client: TokenClient = createTokenClient({
  baseUrl: "http://127.0.0.1:1",
  transport: "rest",
  signer: signerFromPem(pem),
});
export async function create(): Promise<string> {
  const created: CreatedToken = await client.createToken({ userId: "u", name: "n", expiresIn: 3600 });
  const listed: TokenSummary[] = await client.listTokens(created.token);
  return isWellFormedToken(created.token) ? (listed[0]?.id ?? "") : "";
}
export function isNotFound(err: unknown): boolean {
  return err instanceof TokenApiError && err.code === Code.NotFound;
}
export const introspection = createIntrospectionClient({ baseUrl: "http://127.0.0.1:1" });
// @ts-expect-error -- the transport is "rest", "connect" or "grpc"
createTokenClient({ baseUrl: "http://127.0.0.1:1", transport: "carrier-pigeon" });
// @ts-expect-error -- the key file's text or bytes, not a number
signerFromPem(42);
`;

export const TYPED_CJS = `import { createTokenClient, signerFromPem, type TokenClient } from "@perps/token-client";
import { isWellFormedToken } from "@perps/token-client/node";

export const client: TokenClient = createTokenClient({
  baseUrl: "http://127.0.0.1:1",
  signer: signerFromPem(new Uint8Array()),
});
export const wellFormed: boolean = isWellFormedToken("pt_x");
// @ts-expect-error -- createToken needs the userId
void client.createToken({});
`;

/** The key file openssl writes, and the public key to register, as 64 hex. */
export async function opensslKey(path: string): Promise<string> {
  await run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", path]);
  const x = createPublicKey(readFileSync(path)).export({ format: "jwk" }).x;
  return Buffer.from(x ?? "", "base64url").toString("hex");
}
