import type { NodeServerRequest, NodeServerResponse } from "../http/node-handler.js";
import {
  type StatusAnswer,
  type WriteOptions,
  writeStatusAnswer,
} from "../status/status-answer.js";
import { exchangeOf } from "./exchange.js";

/** How a refusal is written besides what it says. */
export interface RefusalOptions extends WriteOptions {
  /** What the log says instead of the answer's message: our own failure's cause, never sent. */
  readonly logged?: string;
}

/**
 * Refuses a request with an error in the service's JSON shape, recording the
 * refusal on the request's exchange first: the one way the listener's
 * endpoints and guards (host, method, CORS, forward-auth, no route) refuse.
 * The REST gateway's refusals reach the exchange through its answer hook,
 * the RPC protocols' through their own answer writers (`wire/`).
 */
export function refuseWithStatus(
  req: NodeServerRequest,
  res: NodeServerResponse,
  answer: StatusAnswer,
  opts: RefusalOptions = {},
): true {
  exchangeOf(req)?.recordOutcome(answer.code, opts.logged ?? answer.message);
  writeStatusAnswer(res, answer, opts);
  return true;
}
