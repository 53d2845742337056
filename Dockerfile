# syntax=docker/dockerfile:1
# The API and the worker: one image, two commands (docker-compose.yml). TypeScript runs through
# tsx (docs/decisions/0001), so there is no build step: the image holds the sources and the
# production dependencies only.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci runs the console's build script, which skips the build here: no development dependencies.
COPY console/build.ts ./console/build.ts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# The operator console (docs/decisions/0150-operator-console-stack.md): built with the development
# dependencies, of which the image keeps only the built files.
FROM node:24-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY clients/ts ./clients/ts
COPY console ./console
RUN node --import tsx console/build.ts

FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    PORT=8000 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY migrations ./migrations
COPY --from=console /app/console/dist ./console/dist
# Uploads (without S3) and upload staging live under DATA_DIR: a volume the unprivileged user owns.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself; the server drains requests and closes.
# A larger young generation: fewer scavenges per request (docs/decisions/0082).
CMD ["node", "--max-semi-space-size=64", "--import", "tsx", "src/server.ts"]
