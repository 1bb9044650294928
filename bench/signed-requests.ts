import { create, toBinary } from "@bufbuild/protobuf";
import {
  CreateTokenRequestSchema,
  DeleteTokenRequestSchema,
} from "@perps/token-client/contract/perps/token/v1/token_pb.js";
import { createTokenMessage, deleteTokenMessage } from "@perps/token-client/protocol";
import { type BenchUser, signHex } from "./bench-users.js";

/** Lifetime of the benchmark's tokens: short, they only need to outlive the run. */
export const BENCH_EXPIRES_IN = 3600n;

/** One signed request in the forms the protocols send: JSON text and protobuf binary. */
export interface SignedRequest {
  readonly json: string;
  readonly binary: Uint8Array;
}

/** A token the delete phase may delete. */
export interface LiveToken {
  readonly user: BenchUser;
  readonly tokenId: string;
}

/**
 * Signs unique requests: every (user, timestamp) pair is used once in the
 * whole run, so the replay check never refuses a benchmark request. Users
 * take turns, and the timestamp moves on by 1 ms per round of users, never
 * behind the wall clock and never back (so it stays within the ±2 min window
 * when signed just before a phase).
 */
export function createSigner(users: readonly BenchUser[]) {
  let nextTimestamp = 0;
  const timestamps = (count: number): bigint[] => {
    const base = Math.max(Date.now(), nextTimestamp);
    const rounds = Math.ceil(count / users.length);
    nextTimestamp = base + rounds;
    return Array.from({ length: count }, (_, i) => BigInt(base + Math.floor(i / users.length)));
  };
  const userAt = (i: number): BenchUser => {
    const user = users[i % users.length];
    if (user === undefined) {
      throw new Error("no benchmark users");
    }
    return user;
  };

  return {
    /** Session-token creates (no name, `expiresIn` 3600). */
    creates(count: number): SignedRequest[] {
      return timestamps(count).map((timestamp, i) => {
        const user = userAt(i);
        const fields = { timestamp, userId: user.userId, expiresIn: BENCH_EXPIRES_IN };
        const signature = signHex(user, createTokenMessage({ ...fields, name: undefined }));
        return {
          json: JSON.stringify({
            signature,
            timestamp: Number(timestamp),
            userId: user.userId,
            expiresIn: Number(BENCH_EXPIRES_IN),
          }),
          binary: toBinary(
            CreateTokenRequestSchema,
            create(CreateTokenRequestSchema, { ...fields, signature }),
          ),
        };
      });
    },

    /** Deletes of the given tokens, one each. */
    deletes(tokens: readonly LiveToken[]): SignedRequest[] {
      const stamps = timestamps(tokens.length);
      return tokens.map(({ user, tokenId }, i) => {
        const timestamp = stamps[i] ?? 0n;
        const fields = { timestamp, tokenId, userId: user.userId };
        const signature = signHex(user, deleteTokenMessage(fields));
        return {
          json: JSON.stringify({
            signature,
            timestamp: Number(timestamp),
            tokenId,
            userId: user.userId,
          }),
          binary: toBinary(
            DeleteTokenRequestSchema,
            create(DeleteTokenRequestSchema, { ...fields, signature }),
          ),
        };
      });
    },
  };
}
