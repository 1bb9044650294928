/** The service's log lines (parsed) of this request id. */
export function requestLines(
  service: { readonly logs: readonly string[] },
  requestId: string,
): Record<string, unknown>[] {
  return service.logs
    .join("")
    .split("\n")
    .filter((line) => line.includes(requestId))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.requestId === requestId);
}
