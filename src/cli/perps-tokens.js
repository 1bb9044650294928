#!/usr/bin/env node
// The perps-tokens command. It runs from the TypeScript sources through tsx,
// a runtime dependency already (`npm start` uses it): no build step, so the
// bin works right after `npm ci` (with --omit=dev too) and is never stale.
import { register } from "tsx/esm/api";

register();
await import("./main.ts");
