import { createRegistry, type JsonValue, type Registry, toJson } from "@bufbuild/protobuf";
import { AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import type { ConnectError } from "@connectrpc/connect";
import { file_google_rpc_error_details } from "@perps/token-client/contract/google/rpc/error_details_pb.js";

/**
 * The error detail types the REST gateway writes into error bodies: the
 * standard ones of google/rpc/error_details.proto (ErrorInfo, RetryInfo,
 * BadRequest, ...). protojson needs a type's schema to write an Any.
 */
export const restErrorDetailTypes: Registry = createRegistry(file_google_rpc_error_details);

/**
 * The details of `error` as the `details` of a google.rpc.Status JSON body:
 * each a protojson Any, `{"@type": "type.googleapis.com/<name>", ...fields}`.
 * Details of types the registry does not know are left out, as Connect's
 * `findDetails` leaves out those it cannot decode.
 */
export function errorDetailsJson(
  error: ConnectError,
  registry: Registry = restErrorDetailTypes,
): JsonValue[] {
  const out: JsonValue[] = [];
  for (const detail of error.findDetails(registry)) {
    const desc = registry.getMessage(detail.$typeName);
    if (desc !== undefined) {
      out.push(toJson(AnySchema, anyPack(desc, detail), { registry }));
    }
  }
  return out;
}
