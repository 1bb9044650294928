// A signed-in user's session (the SDK's calls, its session token renewed):
// only a running service answering shows it.
// Tested by test/integration/console.test.ts, test/integration/console-failures.test.ts.

import {
  Code,
  type CreatedToken,
  createTokenClient,
  cryptoKeyFromPem,
  signerFromCryptoKey,
  TokenApiError,
  type TokenSummary,
} from "@perps/token-client";
import type { CreateGrants } from "./create-grants.js";

/** Lifetime of the session token the console signs in with. */
export const SESSION_SECONDS = 15 * 60;
/** A session token is replaced this long before it expires, so no call meets an expired one. */
const RENEW_BEFORE_MS = 60_000;
const DAY_SECONDS = 86_400;

/** A signed-in user: the key (non-extractable, in this page only) and a session token in memory. */
export interface Session {
  readonly userId: string;
  /** The user's named tokens. */
  list(): Promise<TokenSummary[]>;
  /** Creates a named token living `days` days, with what it may do and from where. */
  create(name: string, days: number, grants: CreateGrants): Promise<CreatedToken>;
  /** Deletes a token of the user (signed). */
  revoke(tokenId: string): Promise<void>;
  /** Deletes the session token (signed); the session is unusable afterwards, whatever the answer. */
  signOut(): Promise<void>;
}

/** Options of {@link signIn}. */
export interface SignInOptions {
  /** The public listener's URL: the page's own origin. */
  baseUrl: string;
  userId: string;
  /** The private key file's bytes (PKCS#8 PEM). */
  keyFile: Uint8Array;
}

interface SessionToken {
  token: string;
  id: string;
  renewAtMs: number;
}

/**
 * Imports the key file into WebCrypto (non-extractable) and creates a
 * 15-minute session token with it (no name, so never listed). The key and
 * the token live in this closure only: no storage, no cookie.
 */
export async function signIn(opts: SignInOptions): Promise<Session> {
  const key = await cryptoKeyFromPem(opts.keyFile);
  // Used once: the bytes read from the file are not kept.
  opts.keyFile.fill(0);
  let client: ReturnType<typeof createTokenClient> | undefined = createTokenClient({
    baseUrl: opts.baseUrl,
    signer: signerFromCryptoKey(key),
  });
  const userId = opts.userId;

  function live() {
    if (client === undefined) {
      throw new Error("Signed out");
    }
    return client;
  }

  async function newSessionToken(): Promise<SessionToken> {
    const started = Date.now();
    // The page only lists: its own token can only read (least privilege starts with us).
    const created = await live().createToken({
      userId,
      expiresIn: SESSION_SECONDS,
      scopes: ["read"],
    });
    return {
      token: created.token,
      id: created.id,
      renewAtMs: started + SESSION_SECONDS * 1000 - RENEW_BEFORE_MS,
    };
  }

  let session = await newSessionToken();

  async function sessionToken(): Promise<string> {
    if (Date.now() >= session.renewAtMs) {
      session = await newSessionToken();
    }
    return session.token;
  }

  return {
    userId,
    async list() {
      try {
        return await live().listTokens(await sessionToken());
      } catch (err) {
        // Deleted or expired meanwhile (another tab, a clock jump): sign a new one, once.
        if (err instanceof TokenApiError && err.code === Code.Unauthenticated) {
          session = await newSessionToken();
          return live().listTokens(session.token);
        }
        throw err;
      }
    },
    create(name, days, grants) {
      return live().createToken({ userId, name, expiresIn: days * DAY_SECONDS, ...grants });
    },
    revoke(tokenId) {
      return live().deleteToken({ userId, tokenId });
    },
    async signOut() {
      const signingClient = live();
      client = undefined;
      await signingClient.deleteToken({ userId, tokenId: session.id });
    },
  };
}
