# Parley API image: `docker compose up --build` (see docker-compose.yml) or
#   docker build -t parley-api . && docker run -e MONGODB_URI=... -e JWT_SECRET=... -p 3000:3000 parley-api
# Debian slim rather than alpine: dev tooling (@parcel/watcher via the nest CLI, jest's resolver) ships glibc builds.

# ---- build: full install, compile TypeScript into dist/ ----
FROM node:24-trixie-slim AS build
WORKDIR /app
# @scarf/scarf (pulled in by swagger-ui-dist) phones home from its postinstall unless told not to.
ENV SCARF_ANALYTICS=false \
    npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false
# The workspace packages' manifests too: npm ci installs and links the workspaces from the lockfile.
COPY package.json package-lock.json ./
COPY packages/embedded-mongo/package.json packages/embedded-mongo/
COPY clients/typescript/package.json clients/typescript/
RUN npm ci
# Everything not excluded by .dockerignore; `npm run build` checks the OpenAPI metadata, then `tsc -b` compiles the
# engine package's src/ into its dist/ and the app's src/ (tsconfig.build.json): no tests either way.
COPY . .
RUN npm run build

# ---- deps: production dependencies only, from the same lockfile ----
FROM node:24-trixie-slim AS deps
WORKDIR /app
ENV SCARF_ANALYTICS=false \
    npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false
COPY package.json package-lock.json ./
COPY packages/embedded-mongo/package.json packages/embedded-mongo/
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --omit=dev && npm cache clean --force

# ---- runtime ----
FROM node:24-trixie-slim AS runtime
# V8's young generation at Node.js 20's size, 16 MiB semi-spaces. Node.js 24 lets each grow to 64 MiB (V8's 32,
# doubled on builds without pointer compression), which kept ~70 MiB more resident after a load. 32 was cheaper in
# CPU on Node.js 24 but took the full bench's RSS on Node.js 20 from 230 to 301 MiB (docs/performance.md). In
# NODE_OPTIONS, so a deployment can set its own; `npm start` and the bench pass the same flag.
# glibc's allocator: two arenas instead of eight per core, and blocks of 64 KiB or more (the driver's socket reads) in
# maps of their own, returned on free instead of held in a fragmented heap. Together with HEAP_GROWTH_PERCENT=100 they
# took the app's RSS after the bench's load from 355-372 to 289 MiB, for no measurable CPU (docs/performance.md).
# The bench starts the app with the same two (bench/lib/app.mjs).
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=16 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
# Files stay owned by root (read-only for the app); the process runs as the image's unprivileged `node` user.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json marks the project's folder (data/ beside it) and gives the API its version; LICENSE is served at
# /docs/license, NOTICE travels with it (Apache-2.0, section 4).
COPY package.json LICENSE NOTICE ./
# The embedded engine (node_modules/@parley/embedded-mongo links here): its manifest and build output only, no tests
# or docs. The app loads it only when MONGODB_URI is unset, which NODE_ENV=production refuses at start-up.
COPY packages/embedded-mongo/package.json packages/embedded-mongo/
COPY --from=build /app/packages/embedded-mongo/dist packages/embedded-mongo/dist
USER node
EXPOSE 3000
# Readiness (the database, the event relay and the lanes; 503 while shutting down). No curl in slim images: node's
# own fetch. Follows PORT if it is overridden at run time.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/ready',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
