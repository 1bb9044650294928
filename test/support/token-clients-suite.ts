import { after, before } from "node:test";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { UserKeyService } from "@perps/token-client/contract/perps/token/v1/user_key_pb.js";
import { createGrpcClient, type GrpcClient } from "./grpc-client.js";
import { lateValue } from "./late-value.js";
import type { ServiceSuite, ServiceSuiteOptions } from "./service-suite.js";
import { newUser, type TestUser } from "./signing.js";
import { createOperatorGrpcClient } from "./test-operator.js";
import { startTestRedis, type TestRedis } from "./test-redis.js";
import { startTestService, type TestService } from "./test-service.js";

export interface TokenClientsSuite extends ServiceSuite {
  /** UserKeyService on the internal listener, as the test operator. */
  readonly grpcKeys: GrpcClient<typeof UserKeyService.method>;
  /** TokenService on the internal listener. */
  readonly grpcTokens: GrpcClient<typeof TokenService.method>;
  /** A new user whose key is registered through the internal listener. */
  registeredUser(userId?: string): Promise<TestUser>;
}

/**
 * serviceSuite (service-suite.ts) plus gRPC clients of TokenService and
 * UserKeyService on the internal listener, closed before the service stops.
 */
export function tokenClientsSuite(options: ServiceSuiteOptions = {}): TokenClientsSuite {
  const { startRedis = startTestRedis, ...serviceOptions } = options;
  const [redis, setRedis] = lateValue<TestRedis>("redis");
  const [service, setService] = lateValue<TestService>("service");
  const [grpcKeys, setGrpcKeys] = lateValue<GrpcClient<typeof UserKeyService.method>>("grpcKeys");
  const [grpcTokens, setGrpcTokens] =
    lateValue<GrpcClient<typeof TokenService.method>>("grpcTokens");

  async function registeredUser(userId?: string): Promise<TestUser> {
    const user = await newUser(userId);
    await grpcKeys.putUserKey({ userId: user.userId, publicKey: user.publicKey });
    return user;
  }

  before(async () => {
    setRedis(await startRedis());
    setService(await startTestService({ ...serviceOptions, redis: redis.topology }));
    setGrpcKeys(createOperatorGrpcClient(UserKeyService, service.internalAddress));
    setGrpcTokens(createGrpcClient(TokenService, service.internalAddress));
  });

  after(async () => {
    grpcKeys.close();
    grpcTokens.close();
    await service.stop();
    await redis.dispose();
  });

  return { redis, service, grpcKeys, grpcTokens, registeredUser };
}
