import { after, before } from "node:test";
import * as grpc from "@grpc/grpc-js";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createGrpcClient } from "./grpc-client.js";
import type { HttpAnswer } from "./hostile-input-checks.js";
import type { Fields } from "./hostile-json-bodies.js";
import { lateValue } from "./late-value.js";
import { newUser, signedCreate, signText, type TestUser } from "./signing.js";
import { createOperatorGrpcClient, operatorGrpcInterceptor } from "./test-operator.js";
import { startTestRedis, type TestRedis } from "./test-redis.js";
import { startTestService, type TestService } from "./test-service.js";

/**
 * The service of a hostile-input suite, its clients and the request makers
 * its tests share; call it inside the suite's describe.
 */
export function hostileInputSuite() {
  const [redis, setRedis] = lateValue<TestRedis>("redis");
  const [service, setService] = lateValue<TestService>("service");
  const [grpcKeys, setGrpcKeys] =
    lateValue<ReturnType<typeof createGrpcClient<typeof UserKeyService.method>>>("grpcKeys");
  const [grpcTokens, setGrpcTokens] =
    lateValue<ReturnType<typeof createGrpcClient<typeof TokenService.method>>>("grpcTokens");
  const [rawInternal, setRawInternal] = lateValue<grpc.Client>("rawInternal");
  const [rawPublic, setRawPublic] = lateValue<grpc.Client>("rawPublic");
  let nameCounter = 0;
  let lastTimestamp = 0;
  let fuzzing: { user: TestUser; runs: number } | undefined;

  async function registeredUser(userId?: string): Promise<TestUser> {
    const u = await newUser(userId);
    await grpcKeys.putUserKey({ userId: u.userId, publicKey: u.publicKey });
    return u;
  }

  /**
   * The user whose valid requests a fuzz run mutates: a fresh one every 300
   * runs, so the live-token cap (1000 per user) is never reached.
   */
  async function fuzzUser(): Promise<TestUser> {
    if (fuzzing === undefined || fuzzing.runs >= 300) {
      fuzzing = { user: await registeredUser(), runs: 0 };
    }
    fuzzing.runs++;
    return fuzzing.user;
  }

  /** Server-time milliseconds, never the same twice: every signed message differs (no replays). */
  function timestamp(): number {
    lastTimestamp = Math.max(Date.now(), lastTimestamp + 1);
    return lastTimestamp;
  }

  /** A name no other request of this file uses. */
  function uniqueName(): string {
    nameCounter++;
    return `fuzz ${nameCounter}`;
  }

  async function http(
    base: string,
    method: string,
    path: string,
    body: Uint8Array | undefined,
    contentType: string | null = "application/json",
  ): Promise<HttpAnswer> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: contentType === null ? {} : { "content-type": contentType },
      ...(body === undefined ? {} : { body }),
    });
    return {
      status: res.status,
      contentType: res.headers.get("content-type") ?? "",
      text: await res.text(),
    };
  }

  /** A valid REST create body, signed now, with or without the optional fields. */
  async function validCreateFields(
    user: TestUser,
    opts: { expiresIn: boolean; name: boolean },
  ): Promise<Fields> {
    const t = timestamp();
    const expiresIn = opts.expiresIn ? 3600 : undefined;
    const name = opts.name ? uniqueName() : undefined;
    const message = `createToken:${t}:${expiresIn ?? ""}:${name ?? ""}:${user.userId}`;
    const fields: Fields = {
      signature: await signText(user.secretKey, message),
      timestamp: t,
      userId: user.userId,
    };
    if (expiresIn !== undefined) fields.expiresIn = expiresIn;
    if (name !== undefined) fields.name = name;
    return fields;
  }

  /** A valid REST delete body for a token that exists, signed now. */
  async function validDeleteFields(user: TestUser): Promise<Fields> {
    const token = await grpcTokens.createToken(
      await signedCreate(user, { timestamp: BigInt(timestamp()) }),
    );
    const t = timestamp();
    const message = `deleteToken:${t}:${token.id}:${user.userId}`;
    return {
      signature: await signText(user.secretKey, message),
      timestamp: t,
      tokenId: token.id,
      userId: user.userId,
    };
  }

  before(async () => {
    setRedis(await startTestRedis());
    setService(await startTestService({ redisUrl: redis.url }));
    setGrpcKeys(createOperatorGrpcClient(UserKeyService, service.internalAddress));
    setGrpcTokens(createGrpcClient(TokenService, service.internalAddress));
    // As an operator: the admin RPCs' own handling of hostile bytes is what is tested.
    setRawInternal(
      new grpc.Client(service.internalAddress, grpc.credentials.createInsecure(), {
        interceptors: [operatorGrpcInterceptor()],
      }),
    );
    setRawPublic(new grpc.Client(service.publicAddress, grpc.credentials.createInsecure()));
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    rawInternal.close();
    rawPublic.close();
    await service.stop();
    await redis.dispose();
  });

  return {
    service,
    grpcKeys,
    grpcTokens,
    rawInternal,
    rawPublic,
    registeredUser,
    fuzzUser,
    timestamp,
    uniqueName,
    http,
    validCreateFields,
    validDeleteFields,
  };
}
