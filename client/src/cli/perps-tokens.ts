#!/usr/bin/env node
// The perps-tokens command: package.json's bin is this file compiled
// (dist/cli/perps-tokens.js), so it runs with plain node, without a loader.
import "./main.js";
