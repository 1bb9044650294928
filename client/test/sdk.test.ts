import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync } from "node:fs";
import { isBuiltin } from "node:module";
import { dirname, join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import * as ed from "@noble/ed25519";
import ts from "typescript";
import { newUser, signBytes, type TestUser } from "../../test/support/signing.js";
import { createOperatorGrpcClient } from "../../test/support/test-operator.js";
import { startTestRedis, type TestRedis } from "../../test/support/test-redis.js";
import { startTestService, type TestService } from "../../test/support/test-service.js";
import { UserKeyService } from "../src/gen/perps/token/v1/user_key_pb.js";
import { openGrpcTransport } from "../src/sdk/grpc-transport.js";
import {
  Code,
  createIntrospectionClient,
  createTokenClient,
  type IntrospectionTransport,
  isWellFormedToken,
  TokenApiError,
  type TokenClientOptions,
  type TokenTransport,
} from "../src/sdk/node.js";

const TRANSPORTS: readonly TokenTransport[] = ["rest", "connect", "grpc"];
const ROOT = resolve(import.meta.dirname, "../..");

interface Harness {
  service: TestService;
  /** A user with a fresh key registered on the internal listener. */
  user(): Promise<TestUser>;
  /** A client of the public listener signing with the user's private key. */
  client(
    transport: TokenTransport,
    user: TestUser,
    opts?: Partial<TokenClientOptions>,
  ): ReturnType<typeof createTokenClient>;
  close(): Promise<void>;
}

async function harness(limits: { maxActive?: number } = {}): Promise<Harness> {
  const redis: TestRedis = await startTestRedis();
  const service = await startTestService({
    redisUrl: redis.url,
    ...(limits.maxActive === undefined ? {} : { tokenMaxActivePerUser: limits.maxActive }),
  });
  const keys = createOperatorGrpcClient(UserKeyService, service.internalAddress);
  const clients: ReturnType<typeof createTokenClient>[] = [];
  return {
    service,
    async user() {
      const user = await newUser();
      await keys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
      return user;
    },
    client(transport, user, opts = {}) {
      const client = createTokenClient({
        baseUrl: service.publicUrl,
        transport,
        signer: { privateKey: user.secretKey },
        ...opts,
      });
      clients.push(client);
      return client;
    },
    async close() {
      for (const client of clients) {
        client.close();
      }
      keys.close();
      await service.stop();
      await redis.dispose();
    },
  };
}

/** An assert.rejects predicate: a TokenApiError with this code, message and HTTP status. */
function apiError(code: Code, message: string | RegExp, httpStatus?: number) {
  return (err: unknown) => {
    assert.ok(err instanceof TokenApiError, `not a TokenApiError: ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === "string") {
      assert.equal(err.message, message);
    } else {
      assert.match(err.message, message);
    }
    assert.equal(err.httpStatus, httpStatus);
    return true;
  };
}

/** The UTC date `seconds` from now, at both ends of the call (a call may straddle midnight). */
function datesIn(seconds: number, from: number, to: number): string[] {
  return [from, to].map((t) => new Date(t + seconds * 1000).toISOString().slice(0, 10));
}

describe("SDK round trips over every transport", () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  for (const transport of TRANSPORTS) {
    it(`${transport}: creates a named token, then deletes it`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      assert.equal(client.transport, transport);
      const from = Date.now();
      const created = await client.createToken({
        userId: user.userId,
        name: `bot-${transport}`,
        expiresIn: 3600,
      });
      assert.ok(isWellFormedToken(created.token));
      assert.match(created.id, /^[A-Za-z0-9_-]{16}$/);
      assert.ok(datesIn(3600, from, Date.now()).includes(created.expiresAt), created.expiresAt);
      assert.equal(
        await client.deleteToken({ userId: user.userId, tokenId: created.id }),
        undefined,
      );
      // Gone: a second delete is refused.
      await assert.rejects(
        client.deleteToken({ userId: user.userId, tokenId: created.id }),
        apiError(Code.NotFound, "tokenId: no such token", transport === "rest" ? 404 : undefined),
      );
    });

    it(`${transport}: creates a session token (no optional field) and a bigint lifetime`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const from = Date.now();
      const session = await client.createToken({ userId: user.userId });
      assert.ok(datesIn(604_800, from, Date.now()).includes(session.expiresAt));
      const long = await client.createToken({
        userId: user.userId,
        name: "yearly",
        expiresIn: 31_536_000n,
      });
      assert.ok(datesIn(31_536_000, from, Date.now()).includes(long.expiresAt));
      await client.deleteToken({ userId: user.userId, tokenId: session.id });
      await client.deleteToken({ userId: user.userId, tokenId: long.id });
    });

    it(`${transport}: sends and signs userId verbatim (upper case)`, async () => {
      const user = await h.user();
      const userId = user.userId.toUpperCase();
      const client = h.client(transport, user);
      const created = await client.createToken({ userId, name: "UPPER" });
      // Identity is case-insensitive on the service, so the lower-case form deletes it.
      await client.deleteToken({ userId: user.userId, tokenId: created.id });
    });
  }
});

describe("SDK typed errors", () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  for (const transport of TRANSPORTS) {
    const status = (http: number) => (transport === "rest" ? http : undefined);

    it(`${transport}: duplicate name is ALREADY_EXISTS (409 on REST)`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const first = await client.createToken({ userId: user.userId, name: "dup" });
      await assert.rejects(
        client.createToken({ userId: user.userId, name: "dup" }),
        apiError(
          Code.AlreadyExists,
          "name: a live token of this user already has this name",
          status(409),
        ),
      );
      await client.deleteToken({ userId: user.userId, tokenId: first.id });
    });

    it(`${transport}: a create whose answer was lost, resent as it was, names its token (createdTokenId) and the delete frees the name`, async () => {
      const user = await h.user();
      const firstAttempt = Date.now();
      // The same `now` makes the identical signed request (Ed25519 is deterministic).
      const client = h.client(transport, user, { now: () => firstAttempt });
      const lost = await client.createToken({ userId: user.userId, name: "lost", expiresIn: 60 });
      const resent = await client
        .createToken({ userId: user.userId, name: "lost", expiresIn: 60 })
        .then(
          () => assert.fail("the resent create succeeded"),
          (err: unknown) => err,
        );
      assert.ok(resent instanceof TokenApiError, `not a TokenApiError: ${String(resent)}`);
      assert.equal(resent.code, Code.AlreadyExists);
      assert.equal(resent.httpStatus, status(409));
      assert.equal(resent.createdTokenId, lost.id);
      assert.ok(!resent.message.includes(lost.token), "the token is never shown again");
      await h.client(transport, user).deleteToken({
        userId: user.userId,
        tokenId: resent.createdTokenId ?? "",
      });
      const again = await h
        .client(transport, user)
        .createToken({ userId: user.userId, name: "lost" });
      await h.client(transport, user).deleteToken({ userId: user.userId, tokenId: again.id });
    });

    it(`${transport}: unknown token is NOT_FOUND`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).deleteToken({ userId: user.userId, tokenId: "no-such-token" }),
        apiError(Code.NotFound, "tokenId: no such token", status(404)),
      );
    });

    it(`${transport}: a key that is not registered is UNAUTHENTICATED "Invalid signature"`, async () => {
      const stranger = await newUser();
      const client = h.client(transport, stranger);
      await assert.rejects(
        client.createToken({ userId: stranger.userId }),
        apiError(Code.Unauthenticated, "Invalid signature", status(401)),
      );
      await assert.rejects(
        client.deleteToken({ userId: stranger.userId, tokenId: "x" }),
        apiError(Code.Unauthenticated, "Invalid signature", status(401)),
      );
    });

    it(`${transport}: the now option sets the signed timestamp (a skewed clock is refused)`, async () => {
      const user = await h.user();
      const client = h.client(transport, user, { now: () => Date.now() - 10 * 60_000 });
      await assert.rejects(
        client.createToken({ userId: user.userId }),
        apiError(Code.Unauthenticated, "Signature expired", status(401)),
      );
    });

    it(`${transport}: a field the service refuses is INVALID_ARGUMENT with its message`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).createToken({ userId: user.userId, expiresIn: 0 }),
        apiError(Code.InvalidArgument, "expiresIn: must be greater than 0", status(400)),
      );
    });

    it(`${transport}: a service that cannot be reached is UNAVAILABLE`, async () => {
      const user = await h.user();
      // Port 1 (tcpmux) is privileged and never served here: connection refused.
      const client = createTokenClient({
        baseUrl: "http://127.0.0.1:1",
        transport,
        signer: { privateKey: user.secretKey },
      });
      try {
        await assert.rejects(client.createToken({ userId: user.userId }), (err) => {
          assert.ok(err instanceof TokenApiError);
          assert.equal(err.code, Code.Unavailable);
          return true;
        });
      } finally {
        client.close();
      }
    });

    it(`${transport}: an aborted call is CANCELLED`, async () => {
      const user = await h.user();
      await assert.rejects(
        h.client(transport, user).createToken({
          userId: user.userId,
          signal: AbortSignal.abort(),
        }),
        (err) => err instanceof TokenApiError && err.code === Code.Canceled,
      );
    });
  }

  it("checks integers locally, since a rounded JSON number would not match its signature", async () => {
    const user = await h.user();
    const client = h.client("rest", user);
    for (const expiresIn of [1.5, Number.MAX_SAFE_INTEGER + 1, 2n ** 53n]) {
      await assert.rejects(
        client.createToken({ userId: user.userId, expiresIn }),
        apiError(Code.InvalidArgument, /^expiresIn: must be an integer/),
      );
    }
  });

  it("refuses a malformed private key when the client is made", () => {
    for (const privateKey of [new Uint8Array(31), "ab".repeat(31), "zz".repeat(32)]) {
      assert.throws(
        () => createTokenClient({ baseUrl: h.service.publicUrl, signer: { privateKey } }),
        TypeError,
      );
    }
  });
});

describe("SDK RESOURCE_EXHAUSTED carries retryAfterSeconds", () => {
  let h: Harness;
  before(async () => {
    h = await harness({ maxActive: 1 });
  });
  after(() => h.close());

  for (const transport of TRANSPORTS) {
    it(transport, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const only = await client.createToken({ userId: user.userId, expiresIn: 60 });
      await assert.rejects(client.createToken({ userId: user.userId }), (err) => {
        assert.ok(err instanceof TokenApiError);
        assert.equal(err.code, Code.ResourceExhausted);
        assert.equal(err.codeName, "RESOURCE_EXHAUSTED");
        assert.equal(err.httpStatus, transport === "rest" ? 429 : undefined);
        const retry = err.retryAfterSeconds ?? 0;
        assert.ok(retry >= 1 && retry <= 60, `retryAfterSeconds ${err.retryAfterSeconds}`);
        return true;
      });
      await client.deleteToken({ userId: user.userId, tokenId: only.id });
    });
  }
});

describe("SDK callback signer", () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  for (const transport of TRANSPORTS) {
    it(`${transport}: signs the exact message elsewhere, answering hex or bytes`, async () => {
      const user = await h.user();
      const messages: string[] = [];
      const fixed = Date.now();
      let asBytes = false;
      const client = createTokenClient({
        baseUrl: h.service.publicUrl,
        transport,
        now: () => fixed,
        // Stands in for a hardware or remote signer: sees only the message bytes.
        signer: async (message) => {
          messages.push(new TextDecoder().decode(message));
          asBytes = !asBytes;
          return asBytes
            ? ed.signAsync(message, user.secretKey)
            : (await signBytes(user.secretKey, message)).toUpperCase();
        },
      });
      try {
        const created = await client.createToken({
          userId: user.userId,
          name: "remote",
          expiresIn: 3600,
        });
        await client.deleteToken({ userId: user.userId, tokenId: created.id });
        assert.deepEqual(messages, [
          `createToken:${fixed}:3600:remote:${user.userId}`,
          `deleteToken:${fixed}:${created.id}:${user.userId}`,
        ]);
      } finally {
        client.close();
      }
    });
  }

  it("leaves empty slots for omitted fields", async () => {
    const user = await h.user();
    const messages: string[] = [];
    const client = createTokenClient({
      baseUrl: h.service.publicUrl,
      signer: async (message) => {
        messages.push(new TextDecoder().decode(message));
        return signBytes(user.secretKey, message);
      },
    });
    const session = await client.createToken({ userId: user.userId });
    const named = await client.createToken({ userId: user.userId, name: "n:1" });
    for (const tokenId of [session.id, named.id]) {
      await client.deleteToken({ userId: user.userId, tokenId });
    }
    assert.match(messages[0] ?? "", new RegExp(`^createToken:\\d+:::${user.userId}$`));
    assert.match(messages[1] ?? "", new RegExp(`^createToken:\\d+::n:1:${user.userId}$`));
  });

  it("a callback answering something that is not a signature fails locally, before sending", async () => {
    const user = await h.user();
    const client = createTokenClient({
      baseUrl: "http://127.0.0.1:1",
      signer: async () => "0x1234",
    });
    await assert.rejects(client.createToken({ userId: user.userId }), TypeError);
  });
});

describe("SDK listTokens", () => {
  let h: Harness;
  before(async () => {
    h = await harness();
  });
  after(() => h.close());

  for (const transport of TRANSPORTS) {
    const status = (http: number) => (transport === "rest" ? http : undefined);

    it(`${transport}: lists the user's live named tokens by name (UTF-8 bytes), with any of the user's tokens`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const session = await client.createToken({ userId: user.userId });
      const named = new Map<string, { id: string; token: string; expiresAt: string }>();
      for (const name of ["b", "é", "a", "Z"]) {
        named.set(name, await client.createToken({ userId: user.userId, name, expiresIn: 3600 }));
      }
      const expected = ["Z", "a", "b", "é"].map((name) => {
        const t = named.get(name);
        return { id: t?.id, name, expiresAt: t?.expiresAt };
      });
      // A session token and a named one list the same; session tokens are never listed.
      assert.deepEqual(await client.listTokens(session.token), expected);
      assert.deepEqual(await client.listTokens(named.get("b")?.token ?? ""), expected);
      // A deleted token is no longer listed.
      await client.deleteToken({ userId: user.userId, tokenId: named.get("a")?.id ?? "" });
      assert.deepEqual(
        (await client.listTokens(session.token)).map((t) => t.name),
        ["Z", "b", "é"],
      );
    });

    it(`${transport}: a user without named tokens gets [] (and another user's tokens never show)`, async () => {
      const user = await h.user();
      const other = await h.user();
      await h.client(transport, other).createToken({ userId: other.userId, name: "theirs" });
      const session = await h.client(transport, user).createToken({ userId: user.userId });
      // A client without a signer lists: only create and delete sign.
      const lister = createTokenClient({ baseUrl: h.service.publicUrl, transport });
      try {
        assert.deepEqual(await lister.listTokens(session.token), []);
        await assert.rejects(lister.createToken({ userId: user.userId }), /^TypeError: signer: /);
      } finally {
        lister.close();
      }
    });

    it(`${transport}: a bad token is UNAUTHENTICATED "Invalid token" (401 on REST), whatever the reason`, async () => {
      const user = await h.user();
      const client = h.client(transport, user);
      const deleted = await client.createToken({ userId: user.userId, name: "gone" });
      await client.deleteToken({ userId: user.userId, tokenId: deleted.id });
      for (const token of [deleted.token, `${deleted.token.slice(0, -1)}x`, "pt_nope"]) {
        await assert.rejects(
          client.listTokens(token),
          apiError(Code.Unauthenticated, "Invalid token", status(401)),
        );
      }
      // No header can carry it: refused the same way, without a call.
      await assert.rejects(
        client.listTokens("pt_\u00e9\n"),
        apiError(Code.Unauthenticated, "Invalid token"),
      );
    });

    it(`${transport}: a service that cannot be reached is UNAVAILABLE; an aborted list is CANCELLED`, async () => {
      const user = await h.user();
      const { token } = await h.client(transport, user).createToken({ userId: user.userId });
      const client = createTokenClient({ baseUrl: "http://127.0.0.1:1", transport });
      try {
        await assert.rejects(
          client.listTokens(token),
          (err) => err instanceof TokenApiError && err.code === Code.Unavailable,
        );
      } finally {
        client.close();
      }
      await assert.rejects(
        h.client(transport, user).listTokens(token, { signal: AbortSignal.abort() }),
        (err) => err instanceof TokenApiError && err.code === Code.Canceled,
      );
    });
  }
});

describe("SDK introspectToken (internal listener)", () => {
  const INTROSPECTION_TRANSPORTS: readonly IntrospectionTransport[] = ["connect", "grpc"];
  const INACTIVE = {
    active: false,
    userId: "",
    tokenId: "",
    name: "",
    expiresAt: "",
    expiresAtMs: 0,
  };
  let h: Harness;
  const introspections: ReturnType<typeof createIntrospectionClient>[] = [];
  function introspection(transport: IntrospectionTransport, baseUrl = h.service.internalUrl) {
    const client = createIntrospectionClient({ baseUrl, transport });
    introspections.push(client);
    return client;
  }
  before(async () => {
    h = await harness();
  });
  after(async () => {
    for (const client of introspections) {
      client.close();
    }
    await h.close();
  });

  it('defaults to "connect"', () => {
    assert.equal(
      createIntrospectionClient({ baseUrl: h.service.internalUrl }).transport,
      "connect",
    );
  });

  it('"rest" is refused when the client is made: IntrospectToken has no REST mapping', () => {
    assert.throws(
      () =>
        createIntrospectionClient({
          baseUrl: h.service.internalUrl,
          transport: "rest" as IntrospectionTransport,
        }),
      /^TypeError: transport: must be "connect" or "grpc", not rest \(IntrospectToken has no REST mapping\)$/,
    );
  });

  for (const transport of INTROSPECTION_TRANSPORTS) {
    it(`${transport}: a live named token is active, with every field`, async () => {
      const user = await h.user();
      const from = Date.now();
      const created = await h
        .client("rest", user)
        .createToken({ userId: user.userId.toUpperCase(), name: "bot", expiresIn: 3600 });
      const to = Date.now();
      const answer = await introspection(transport).introspectToken(created.token);
      assert.deepEqual(
        { ...answer, expiresAtMs: 0 },
        {
          active: true,
          userId: user.userId.toLowerCase(),
          tokenId: created.id,
          name: "bot",
          expiresAt: created.expiresAt,
          expiresAtMs: 0,
        },
      );
      assert.equal(typeof answer.expiresAtMs, "number");
      assert.ok(
        answer.expiresAtMs >= from + 3_600_000 && answer.expiresAtMs <= to + 3_600_000,
        String(answer.expiresAtMs),
      );
      assert.equal(new Date(answer.expiresAtMs).toISOString().slice(0, 10), created.expiresAt);
    });

    it(`${transport}: a session token is active with name ""; inactive once deleted`, async () => {
      const user = await h.user();
      const client = h.client("rest", user);
      const session = await client.createToken({ userId: user.userId });
      const checker = introspection(transport);
      const live = await checker.introspectToken(session.token);
      assert.equal(live.active, true);
      assert.equal(live.name, "");
      assert.equal(live.tokenId, session.id);
      await client.deleteToken({ userId: user.userId, tokenId: session.id });
      assert.deepEqual(await checker.introspectToken(session.token), INACTIVE);
    });

    it(`${transport}: anything that is not a live token is inactive, never an error`, async () => {
      const user = await h.user();
      const { token } = await h.client("rest", user).createToken({ userId: user.userId });
      const checker = introspection(transport);
      // The last character changed (to one it is not: a token may end in "x").
      const altered = `${token.slice(0, -1)}${token.endsWith("x") ? "y" : "x"}`;
      for (const bad of ["", "pt_nope", altered, `${token} `, "é\n"]) {
        assert.deepEqual(await checker.introspectToken(bad), INACTIVE, JSON.stringify(bad));
      }
    });

    it(`${transport}: the public listener does not serve it (UNIMPLEMENTED); unreachable is UNAVAILABLE`, async () => {
      await assert.rejects(
        introspection(transport, h.service.publicUrl).introspectToken("pt_x"),
        (err) => err instanceof TokenApiError && err.code === Code.Unimplemented,
      );
      await assert.rejects(
        introspection(transport, "http://127.0.0.1:1").introspectToken("pt_x"),
        (err) => err instanceof TokenApiError && err.code === Code.Unavailable,
      );
    });
  }
});

describe("SDK browser path", () => {
  type Graph = { files: Set<string>; builtins: Map<string, string>; globals: string[] };

  // A bundler targeting browsers picks these export conditions.
  const CONDITIONS = new Set(["browser", "import", "module", "default"]);

  function exportTarget(entry: unknown): string | undefined {
    if (typeof entry === "string") {
      return entry;
    }
    if (typeof entry === "object" && entry !== null) {
      for (const [condition, target] of Object.entries(entry)) {
        const found = CONDITIONS.has(condition) ? exportTarget(target) : undefined;
        if (found !== undefined) {
          return found;
        }
      }
    }
    return undefined;
  }

  function resolvePackage(specifier: string, from: string): string {
    const parts = specifier.split("/");
    const nameLength = specifier.startsWith("@") ? 2 : 1;
    const name = parts.slice(0, nameLength).join("/");
    const subpath = ["."].concat(parts.slice(nameLength)).join("/");
    for (let dir = dirname(from); ; dir = dirname(dir)) {
      const pkgDir = join(dir, "node_modules", name);
      if (existsSync(join(pkgDir, "package.json"))) {
        const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as {
          exports?: Record<string, unknown>;
          module?: string;
          main?: string;
        };
        const target =
          pkg.exports === undefined
            ? subpath === "."
              ? (pkg.module ?? pkg.main ?? "index.js")
              : subpath
            : exportTarget(pkg.exports[subpath]);
        assert.ok(target !== undefined, `${specifier}: no export for ${subpath}`);
        return join(pkgDir, target);
      }
      assert.notEqual(dir, dirname(dir), `${specifier} not found from ${from}`);
    }
  }

  function resolveSpecifier(specifier: string, from: string): string {
    if (!specifier.startsWith(".")) {
      return resolvePackage(specifier, from);
    }
    const path = resolve(dirname(from), specifier);
    if (existsSync(path) && statSync(path).isFile()) {
      return path;
    }
    // Our sources import "./x.js" for "./x.ts" (NodeNext).
    const tsPath = path.replace(/\.js$/, ".ts");
    assert.ok(existsSync(tsPath), `cannot resolve ${specifier} from ${from}`);
    return tsPath;
  }

  /**
   * What a bundler would pull in: static imports and re-exports that are not
   * type-only, and dynamic imports of a literal specifier.
   */
  function importsOf(file: string): { specifiers: string[]; globals: string[] } {
    const kind = file.endsWith(".ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS;
    const source = ts.createSourceFile(
      file,
      readFileSync(file, "utf8"),
      ts.ScriptTarget.Latest,
      true,
      kind,
    );
    const specifiers: string[] = [];
    const globals: string[] = [];
    const visit = (node: ts.Node): void => {
      if (
        ts.isImportDeclaration(node) &&
        node.importClause?.isTypeOnly !== true &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        specifiers.push(node.moduleSpecifier.text);
      } else if (
        ts.isExportDeclaration(node) &&
        !node.isTypeOnly &&
        node.moduleSpecifier !== undefined &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        specifiers.push(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] !== undefined &&
        ts.isStringLiteralLike(node.arguments[0])
      ) {
        specifiers.push(node.arguments[0].text);
      } else if (
        ts.isIdentifier(node) &&
        (node.text === "Buffer" || node.text === "process") &&
        !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node) &&
        !(ts.isPropertySignature(node.parent) && node.parent.name === node)
      ) {
        globals.push(`${node.text} in ${file}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    return { specifiers, globals };
  }

  function importGraph(entry: string): Graph {
    const graph: Graph = { files: new Set(), builtins: new Map(), globals: [] };
    const queue = [entry];
    for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
      if (graph.files.has(file)) {
        continue;
      }
      graph.files.add(file);
      const { specifiers, globals } = importsOf(file);
      if (file.startsWith(join(ROOT, "client/src"))) {
        graph.globals.push(...globals);
      }
      for (const specifier of specifiers) {
        if (isBuiltin(specifier)) {
          graph.builtins.set(specifier, file);
        } else {
          queue.push(resolveSpecifier(specifier, file));
        }
      }
    }
    return graph;
  }

  it("no module reachable from the SDK entry imports a Node.js built-in", () => {
    const graph = importGraph(join(ROOT, "client/src/sdk/index.ts"));
    assert.deepEqual(Object.fromEntries(graph.builtins), {});
    assert.deepEqual(graph.globals, [], "Node globals used on the browser path");
    const files = [...graph.files].map((f) => f.slice(ROOT.length + 1));
    // The walk did reach what the SDK is made of, node_modules included...
    for (const expected of [
      "client/src/protocol/signed-message.ts",
      "client/src/gen/perps/token/v1/token_pb.ts",
      "node_modules/@connectrpc/connect-web/dist/esm/index.js",
      "node_modules/@noble/ed25519/index.js",
    ]) {
      assert.ok(files.includes(expected), `${expected} not on the graph`);
    }
    // ...but not connect-node, which only the gRPC transport loads, lazily.
    assert.deepEqual(
      files.filter((f) => f.includes("connect-node")),
      [],
    );
  });

  it("the walk does see Node built-ins: the Node entry reaches node:crypto and node:zlib", () => {
    const graph = importGraph(join(ROOT, "client/src/sdk/node.ts"));
    assert.ok(graph.builtins.has("node:crypto"));
    assert.ok(graph.builtins.has("node:zlib"));
  });

  it('transport "grpc" outside Node.js fails with a clear error', async () => {
    const node = Object.getOwnPropertyDescriptor(process.versions, "node");
    assert.ok(node !== undefined);
    // What a browser looks like to the check: no process.versions.node. Only
    // the synchronous start of the call runs without it.
    Object.defineProperty(process.versions, "node", { ...node, value: undefined });
    let opening: Promise<unknown>;
    try {
      opening = openGrpcTransport("http://127.0.0.1:1");
    } finally {
      Object.defineProperty(process.versions, "node", node);
    }
    await assert.rejects(opening, /transport "grpc" needs HTTP\/2 and works in Node\.js only/);
  });

  it("the package exports the browser entry as '.' and the Node one as './node'", () => {
    type Target = { types: string; default: string };
    const pkg = JSON.parse(readFileSync(join(ROOT, "client/package.json"), "utf8")) as {
      exports: Record<string, { import: Target; require: Target }>;
    };
    for (const [subpath, module] of [
      [".", "index"],
      ["./node", "node"],
    ] as const) {
      // What client/test/package.test.ts installs and runs: the build of these sources.
      assert.deepEqual(pkg.exports[subpath], {
        import: { types: `./dist/sdk/${module}.d.ts`, default: `./dist/sdk/${module}.js` },
        require: {
          types: `./dist/cjs/sdk/${module}.d.ts`,
          default: `./dist/cjs/sdk/${module}.js`,
        },
      });
    }
  });
});
