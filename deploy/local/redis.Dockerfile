# Redis from Debian's packages. Like the official image, a server started without a configuration
# file answers other containers (protected mode off: only the compose network reaches it).
ARG DEBIAN_BASE=localhost/debian:bookworm
FROM ${DEBIAN_BASE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*
COPY redis-entrypoint.sh /usr/local/bin/redis-entrypoint
USER redis
EXPOSE 6379
ENTRYPOINT ["redis-entrypoint"]
CMD ["redis-server"]
