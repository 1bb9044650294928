import type { NodeServerRequest, NodeServerResponse } from "./node-handler.js";

/**
 * A plain HTTP endpoint of a listener (health, metrics, OpenAPI, forward-auth,
 * CORS, the console, the plain endpoints' 405): it answers the requests that
 * are its own and says how its answers are labelled in the log and the
 * metrics; the listener asks its endpoints in order and names the exchange
 * by the one that answered (listener-handler.ts).
 */
export interface Endpoint {
  /** Answers the request if it is one of its own: true when it did. */
  readonly answer: (req: NodeServerRequest, res: NodeServerResponse) => boolean;
  /** The method label of its answers in the log and the metrics. Default "http". */
  readonly label?: string;
  /** Its answers are health probes, which balancers send every few seconds: debug lines. */
  readonly probe?: boolean;
}
