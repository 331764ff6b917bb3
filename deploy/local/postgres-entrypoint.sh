#!/bin/sh
# The first start makes the cluster, its user (with a password for connections from other
# containers) and its database; every start then runs the server in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
    user=${POSTGRES_USER:-postgres}
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    initdb -D "$PGDATA" -U "$user" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f /tmp/pwfile
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    if [ "${POSTGRES_DB:-$user}" != postgres ]; then
        createdb -U "$user" "${POSTGRES_DB:-$user}"
    fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
if [ "$1" = postgres ]; then
    shift
    exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
