import { callerKey, operatorKey } from "../admin-auth/call-gate.js";
import type { AuditLog } from "../log/audit-event.js";
import type { Logger } from "../log/logger.js";
import { requestIdKey } from "./request-id.js";

/**
 * The audit lines of operators' actions: one line `"msg":"audit"` per
 * action, with the operator who asked, the peer address of the connection
 * and the request id of the call, so that it sits next to the call's own
 * request line. Written at info level by a logger of its own level, so
 * that LOG_LEVEL (warn, error, silent) never drops one.
 */
export function createAuditLog(logger: Logger): AuditLog {
  const audit = logger.child({}, { level: "info" });
  return (event, context) => {
    audit.info(
      {
        ...event,
        operator: context.values.get(operatorKey),
        peer: context.values.get(callerKey).address,
        requestId: context.values.get(requestIdKey),
      },
      "audit",
    );
  };
}
