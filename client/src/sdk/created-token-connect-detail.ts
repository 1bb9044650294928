import type { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/google/rpc/error_details_pb.js";
import { tokenIdOf } from "./created-token-detail.js";

/** The created token's id carried by a Connect or gRPC error, if any. */
export function createdTokenIdOfConnectError(err: ConnectError): string | undefined {
  for (const info of err.findDetails(ErrorInfoSchema)) {
    const id = tokenIdOf(info);
    if (id !== undefined) {
      return id;
    }
  }
  return undefined;
}
