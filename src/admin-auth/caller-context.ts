import type { TLSSocket } from "node:tls";
import { type ContextValues, createContextKey } from "@connectrpc/connect";
import type { NodeServerRequest } from "../http/node-handler.js";

/** What the connection says of the caller, for the operator check and the audit line. */
export interface Caller {
  /** The peer's IP address, as the socket has it ("" when unknown). */
  address: string;
  /**
   * The subject (CN) of the client certificate the connection presented,
   * when TLS verified it against the listener's client CA; else undefined.
   */
  certificateSubject: string | undefined;
}

/** The caller of a call, set per request from its connection. */
export const callerKey = createContextKey<Caller>(
  { address: "", certificateSubject: undefined },
  { description: "caller" },
);

/** The verified client certificate's subject CN, if the connection has one (HTTP/2's socket is a proxy of it). */
function certificateSubjectOf(connection: unknown): string | undefined {
  const socket = connection as Partial<TLSSocket> | undefined;
  if (socket?.authorized !== true || typeof socket.getPeerCertificate !== "function") {
    return undefined;
  }
  const cn: unknown = socket.getPeerCertificate().subject?.CN;
  return typeof cn === "string" && cn !== "" ? cn : undefined;
}

/**
 * The listener's context values of a call, with what the connection says of
 * the caller added: interceptors and services see no socket.
 */
export function withCaller(
  contextValues: (req: NodeServerRequest) => ContextValues,
): (req: NodeServerRequest) => ContextValues {
  return (req) => {
    const values = contextValues(req);
    values.set(callerKey, callerOf(req.socket));
    return values;
  };
}

/** What a connection says of its caller (a request's socket, or a raw HTTP/2 stream's session socket). */
export function callerOf(socket: { remoteAddress?: string | undefined } | undefined): Caller {
  return { address: socket?.remoteAddress ?? "", certificateSubject: certificateSubjectOf(socket) };
}
