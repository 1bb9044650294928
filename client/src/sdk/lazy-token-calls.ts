import { keptUnlessRejected } from "./kept-promise.js";
import type { TokenCalls } from "./token-calls.js";

/**
 * Token calls made on first use by `load`: the "connect" and "grpc"
 * transports import protobuf and connect only when a call needs them, so a
 * browser app bundled with code splitting that uses "rest" never downloads
 * them. A failed load is not kept: the next call tries again.
 */
export function createLazyTokenCalls(load: () => Promise<TokenCalls>): TokenCalls {
  const kept = keptUnlessRejected(load);
  const calls = () => kept.get();
  return {
    async createToken(req, settings) {
      return (await calls()).createToken(req, settings);
    },
    async deleteToken(req, settings) {
      return (await calls()).deleteToken(req, settings);
    },
    async listTokens(authorization, page, settings) {
      return (await calls()).listTokens(authorization, page, settings);
    },
    close() {
      kept.current()?.then(
        (loaded) => loaded.close(),
        () => {
          // Never loaded: nothing to release.
        },
      );
    },
  };
}
