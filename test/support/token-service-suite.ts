import { before } from "node:test";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { TokenService } from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { lateValue } from "./late-value.js";
import { tokenClientsSuite } from "./token-clients-suite.js";

type TokenServiceClient = ReturnType<typeof createClient<typeof TokenService>>;

/**
 * The service of a TokenService suite: tokenClientsSuite plus Connect clients
 * of the public listener over HTTP/1.1 and HTTP/2. Call it inside the suite's
 * describe.
 */
export function tokenServiceSuite() {
  const suite = tokenClientsSuite({ tokenMaxLifetimeSeconds: 31_536_000 });
  const [publicTokens, setPublicTokens] = lateValue<TokenServiceClient>("publicTokens");
  const [publicTokensH2, setPublicTokensH2] = lateValue<TokenServiceClient>("publicTokensH2");
  before(() => {
    setPublicTokens(
      createClient(
        TokenService,
        createConnectTransport({ baseUrl: suite.service.publicUrl, httpVersion: "1.1" }),
      ),
    );
    setPublicTokensH2(
      createClient(
        TokenService,
        createConnectTransport({ baseUrl: suite.service.publicUrl, httpVersion: "2" }),
      ),
    );
  });
  return { ...suite, publicTokens, publicTokensH2 };
}
