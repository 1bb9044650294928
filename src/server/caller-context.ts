import { type ContextValues, createContextKey } from "@connectrpc/connect";
import type { NodeServerRequest } from "../http/node-handler.js";

/** What the connection says of the caller, for the audit line. */
export interface Caller {
  /** The peer's IP address, as the socket has it ("" when unknown). */
  address: string;
}

/** The caller of a call, set per request from its connection. */
export const callerKey = createContextKey<Caller>({ address: "" }, { description: "caller" });

/**
 * The listener's context values of a call, with what the connection says of
 * the caller added: interceptors and services see no socket.
 */
export function withCaller(
  contextValues: (req: NodeServerRequest) => ContextValues,
): (req: NodeServerRequest) => ContextValues {
  return (req) => {
    const values = contextValues(req);
    values.set(callerKey, { address: req.socket?.remoteAddress ?? "" });
    return values;
  };
}
