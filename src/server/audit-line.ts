import { operatorKey } from "../admin-auth/admin-auth-interceptor.js";
import type { AuditLog } from "../log/audit-event.js";
import type { Logger } from "../log/logger.js";
import { requestIdKey } from "./request-id.js";

/**
 * The audit lines of operators' actions: one info line `"msg":"audit"` per
 * action, with the operator who asked and the request id of the call, so
 * that it sits next to the call's own request line.
 */
export function createAuditLog(logger: Logger): AuditLog {
  return (event, context) => {
    logger.info(
      {
        ...event,
        operator: context.values.get(operatorKey),
        requestId: context.values.get(requestIdKey),
      },
      "audit",
    );
  };
}
