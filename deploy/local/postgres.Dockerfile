# PostgreSQL from Debian's packages, started like the official image: POSTGRES_USER, POSTGRES_PASSWORD
# and POSTGRES_DB make the cluster on the first start; the data lives in /var/lib/postgresql/data.
ARG DEBIAN_BASE=localhost/debian:bookworm
FROM ${DEBIAN_BASE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s /usr/lib/postgresql/*/bin /usr/lib/postgresql/bin \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
    && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/bin:$PATH PGDATA=/var/lib/postgresql/data LANG=C.UTF-8
USER postgres
EXPOSE 5432
# SIGINT is PostgreSQL's fast shutdown: a stop does not wait for every client to hang up.
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
CMD ["postgres"]
