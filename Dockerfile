# syntax=docker/dockerfile:1
# The service as a container: a build stage compiles dist/, the final stage is a
# production install (no devDependencies) running the compiled JavaScript as the
# unprivileged user `node`. No container engine runs where this is developed:
# test/integration/container-recipe.test.ts replays this file's COPY and RUN
# lines in temp folders, starts the result and creates a token through it
# (docs/running.md, "Containers").

FROM node:24-bookworm-slim AS build
WORKDIR /app
# Two packages (npm workspaces): the service, and the client package whose
# `@perps/token-client/protocol` and `@perps/token-client/contract/…` (the
# contract's generated code) the service imports.
COPY package.json package-lock.json ./
COPY client/package.json ./client/
# No scripts: `prepare` would build before the sources are here.
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY client/tsconfig.json client/tsconfig.build.json ./client/
COPY client/scripts ./client/scripts
COPY client/src ./client/src
RUN npm run build

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY client/package.json ./client/
# --ignore-scripts: `prepare` builds, and TypeScript is a devDependency; production
# runs no install script (nothing in node_modules is edited).
# npm's cache is a build cache mount: it never lands in the image, and needs no clean-up.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts
COPY --from=build /app/dist ./dist
COPY --from=build /app/client/dist ./client/dist
COPY openapi.json openapi-limits.json ./
# The data folder, where the first start writes the generated operator when no
# ADMIN_CREDENTIALS_FILE is given: the service's user (node, uid 1000) owns it.
RUN mkdir -p .data && chown 1000:1000 .data
# The public listener must be reachable from outside the container; the internal
# one (keys, introspection, /auth, /metrics) stays on 127.0.0.1 unless
# INTERNAL_HOST says otherwise (compose.yaml opens it to the compose network only).
# The ports are the defaults (PUBLIC_PORT 8080, INTERNAL_PORT 9090), not set here:
# a container still given the deprecated HTTP_PORT or GRPC_PORT then uses it,
# where an image value of the new name would refuse the pair as a conflict.
ENV HOST=0.0.0.0
EXPOSE 8080 9090
USER node
# node itself, as slim images have no curl: /healthz answers 200 while the process
# serves (a Redis outage is /readyz's business; restarting would not cure it).
# HTTP_PORT goes with the deprecated name, in the next minor release.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PUBLIC_PORT || process.env.HTTP_PORT || 8080}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Plain node as PID 1 gets SIGTERM from `docker stop` and stops gracefully.
CMD ["node", "dist/main.js"]
