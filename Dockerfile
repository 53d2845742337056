# syntax=docker/dockerfile:1
# The API and the worker: one image, two commands (docker-compose.yml). TypeScript runs through
# tsx (docs/decisions/0001), so there is no build step: the image holds the sources and the
# production dependencies only.

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

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
