#!/usr/bin/env bash
# `make compose-up` / `make compose-down`: the compose stack of docker-compose.yml on this machine,
# with Docker (docker compose) or podman (podman-compose), from nothing to a served page.
#
#   deploy/stack.sh up        prepare what is missing, build, start, wait for health, print the URL
#   deploy/stack.sh down      stop and remove the containers (the volumes, hence the data, stay)
#   deploy/stack.sh down -v   the same, and remove the volumes
#   deploy/stack.sh build     only prepare and build the images
#   deploy/stack.sh scale web=3   run that many containers of one service (web, api or worker)
#
# Images: with LOCAL_IMAGES=auto (the default) the official images are used when the registry
# answers, else every image is built from a Debian base made here (debootstrap, then `import`):
# the app on deploy/local/python.Dockerfile, PostgreSQL, Redis and Caddy from Debian's packages
# (deploy/compose.local.yml). LOCAL_IMAGES=1 or 0 forces one or the other; the automatic choice is
# kept in var/compose-local-images.
#
# Settings (environment): HTTP_PORT (8080), PUBLISH_ADDRESS (127.0.0.1), COMPOSE_PROJECT_NAME
# (tavernkeep), WEB_REPLICAS, API_REPLICAS, WORKER_REPLICAS, SECRET_KEY (else one is made once and
# kept in var/compose-secret-key), EXTRA_COMPOSE_FILES (more -f files, space separated),
# WAIT_SECONDS (300). Plain HTTP on the published address, so SECURE_HTTPS defaults to 0 here.
# See docs/scaling.md#the-compose-stack for what it needs and how long it takes.
set -euo pipefail
cd "$(dirname "$0")/.."

export COMPOSE_PROJECT_NAME=${COMPOSE_PROJECT_NAME:-tavernkeep}
export HTTP_PORT=${HTTP_PORT:-8080}
export HTTPS_PORT=${HTTPS_PORT:-8443}
export PUBLISH_ADDRESS=${PUBLISH_ADDRESS:-127.0.0.1}
export SECURE_HTTPS=${SECURE_HTTPS:-0}
export ALLOWED_HOSTS=${ALLOWED_HOSTS:-localhost,127.0.0.1}
export CSRF_TRUSTED_ORIGINS=${CSRF_TRUSTED_ORIGINS:-}
LOCAL_IMAGES=${LOCAL_IMAGES:-auto}
WAIT_SECONDS=${WAIT_SECONDS:-300}
DEBIAN_SUITE=bookworm
DEBIAN_BASE=localhost/debian:$DEBIAN_SUITE
PYTHON_LOCAL=localhost/tavernkeep-python:3.11

say() { printf '%s %s\n' "[$(date -u +%H:%M:%S)]" "$*"; }
fail() { printf 'deploy/stack.sh: %s\n' "$*" >&2; exit 1; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

choose_engine() {
    if [ -n "${ENGINE:-}" ]; then
        :
    elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        ENGINE=docker
    elif command -v podman >/dev/null 2>&1; then
        ENGINE=podman
    else
        fail "needs Docker (with the compose plugin) or podman with podman-compose; on Debian or Ubuntu: apt-get install podman podman-compose debootstrap runc"
    fi
    if [ "$ENGINE" = podman ]; then
        command -v podman-compose >/dev/null 2>&1 || fail "podman-compose is missing (apt-get install podman-compose)"
        COMPOSE=(podman-compose -p "$COMPOSE_PROJECT_NAME")
    else
        COMPOSE=(docker compose -p "$COMPOSE_PROJECT_NAME")
    fi
}

# podman's defaults are refused on some hosts: crun cannot run in cgroup v1 "hybrid" mode, and the
# default ulimits may exceed the host's hard limits. A container that starts here proves neither
# applies; otherwise runc and ulimits within the hard limits go into containers.conf.
podman_runtime_settings() { # podman_runtime_settings IMAGE: an image to try a container of
    [ "$ENGINE" = podman ] || return 0
    local probe=$1
    if podman run --rm --network none "$probe" true >/dev/null 2>&1; then
        return 0
    fi
    local conf=/etc/containers/containers.conf
    [ "$(id -u)" = 0 ] || conf=${XDG_CONFIG_HOME:-$HOME/.config}/containers/containers.conf
    if [ -s "$conf" ] && grep -q '^runtime *=' "$conf"; then
        fail "a test container does not start and $conf already sets a runtime: check it (podman run --rm $probe true)"
    fi
    command -v runc >/dev/null 2>&1 || fail "containers do not start with podman's default runtime; install runc"
    local nofile nproc
    nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
    [ "$nofile" = unlimited ] || [ "$nofile" -gt 4096 ] && nofile=4096
    [ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
    say "Writing runtime settings to $conf (runc, ulimits nofile=$nofile nproc=$nproc)"
    mkdir -p "$(dirname "$conf")"
    cat >>"$conf" <<EOF

# Written by deploy/stack.sh: crun and podman's default ulimits are refused on this host.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
EOF
    podman run --rm --network none "$probe" true >/dev/null || fail "containers still do not start; see $conf"
}

image_exists() { "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# A minimal Debian made with debootstrap, trusting what this host trusts (its CA bundle, for pip
# and apt behind an intercepting proxy), imported as $DEBIAN_BASE.
debian_base() {
    image_exists "$DEBIAN_BASE" && return 0
    command -v debootstrap >/dev/null 2>&1 || fail "debootstrap is missing (apt-get install debootstrap)"
    local root
    root=$(mktemp -d "${TMPDIR:-/var/tmp}/tavernkeep-rootfs.XXXXXX")
    say "Making the Debian $DEBIAN_SUITE base with debootstrap (about a minute)"
    as_root debootstrap --variant=minbase "$DEBIAN_SUITE" "$root" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >/dev/null
    as_root sh -c "
        printf '%s\n' 'deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} $DEBIAN_SUITE main' \
            'deb ${DEBIAN_MIRROR:-http://deb.debian.org/debian} $DEBIAN_SUITE-updates main' \
            'deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main' > '$root/etc/apt/sources.list'
        if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
            mkdir -p '$root/etc/ssl/certs' '$root/usr/local/share/ca-certificates'
            cp /etc/ssl/certs/ca-certificates.crt '$root/etc/ssl/certs/ca-certificates.crt'
            # the host's own authorities stay in the bundle when a package rebuilds it
            cp /usr/local/share/ca-certificates/*.crt '$root/usr/local/share/ca-certificates/' 2>/dev/null || true
            printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > '$root/etc/pip.conf'
        fi
        rm -rf '$root'/var/cache/apt/archives/*.deb '$root'/var/lib/apt/lists/*
        tar -C '$root' -c . | $ENGINE import - '$DEBIAN_BASE' >/dev/null
        rm -rf '$root'"
}

use_local_images() {
    case "$LOCAL_IMAGES" in
        1 | yes | true) return 0 ;;
        0 | no | false) return 1 ;;
    esac
    # Decided once per checkout and kept in var/compose-local-images (remove it to decide again).
    if [ -z "${LOCAL_DECIDED:-}" ] && [ -s var/compose-local-images ]; then
        LOCAL_DECIDED=$(cat var/compose-local-images)
    fi
    if [ -z "${LOCAL_DECIDED:-}" ]; then
        LOCAL_DECIDED=0
        if ! image_exists docker.io/library/python:3.11-slim \
            && ! timeout 60 "$ENGINE" pull -q docker.io/library/python:3.11-slim >/dev/null 2>&1; then
            say "The official images cannot be pulled: building every image from a local Debian base"
            LOCAL_DECIDED=1
        fi
        mkdir -p var && echo "$LOCAL_DECIDED" >var/compose-local-images
    fi
    [ "$LOCAL_DECIDED" = 1 ]
}

compose_files() {
    FILES=(-f docker-compose.yml)
    use_local_images && FILES+=(-f deploy/compose.local.yml)
    for extra in ${EXTRA_COMPOSE_FILES:-}; do FILES+=(-f "$extra"); done
}

secret_key() {
    [ -n "${SECRET_KEY:-}" ] && return 0
    if [ -f .env ] && grep -q '^SECRET_KEY=' .env; then
        SECRET_KEY=$(grep '^SECRET_KEY=' .env | tail -n1 | cut -d= -f2-)
    else
        mkdir -p var
        if [ ! -s var/compose-secret-key ]; then
            (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >var/compose-secret-key)
        fi
        SECRET_KEY=$(cat var/compose-secret-key)
    fi
    export SECRET_KEY
}

build_tag() { # build_tag TAG ARGS...: build; the image TAG named before goes unless a container uses it
    local tag=$1 before
    shift
    before=$("$ENGINE" image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
    "$ENGINE" build -q "$@" -t "$tag" >/dev/null
    if [ -n "$before" ] && [ "$before" != "$("$ENGINE" image inspect --format '{{.Id}}' "$tag")" ]; then
        "$ENGINE" rmi "$before" >/dev/null 2>&1 || true
    fi
}

# Built here rather than by the compose tool: the layer cache makes a rebuild with nothing changed
# take seconds, with Docker and podman alike.
build_images() {
    local started=$SECONDS
    if use_local_images; then
        debian_base
        podman_runtime_settings "$DEBIAN_BASE"
        local name
        for name in python postgres redis caddy; do
            local tag=localhost/tavernkeep-$name:local
            [ "$name" = python ] && tag=$PYTHON_LOCAL
            say "Building $tag"
            build_tag "$tag" --build-arg "DEBIAN_BASE=$DEBIAN_BASE" --build-arg "PYTHON_BASE=$PYTHON_LOCAL" \
                -f "deploy/local/$name.Dockerfile" deploy/local
        done
        say "Building tavernkeep:latest on $PYTHON_LOCAL"
        build_tag tavernkeep:latest --build-arg "BASE=$PYTHON_LOCAL" .
    else
        podman_runtime_settings docker.io/library/python:3.11-slim
        say "Building tavernkeep:latest"
        build_tag tavernkeep:latest .
    fi
    say "Images ready in $((SECONDS - started)) s"
}

container() { # the name of a service's container (podman-compose names them PROJECT_SERVICE_N)
    "$ENGINE" ps -a --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
        --filter "label=com.docker.compose.service=$1" --format '{{.Names}}' | sort | head -n1
}

wait_for() { # wait_for WHAT COMMAND...: retry COMMAND until it succeeds or WAIT_SECONDS pass
    local what=$1 deadline=$((SECONDS + WAIT_SECONDS))
    shift
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || fail "$what not ready after $WAIT_SECONDS s"
        sleep 1
    done
}

compose() { # the compose tool, its chatter kept in var/compose-PROJECT.log (shown when a step fails)
    mkdir -p var
    LOG=var/compose-$COMPOSE_PROJECT_NAME.log
    if ! "${COMPOSE[@]}" "${FILES[@]}" "$@" >>"$LOG" 2>&1; then
        tail -n 20 "$LOG" >&2
        fail "${COMPOSE[*]} $* failed (the whole output: $LOG)"
    fi
}

remove_containers() {
    local left
    left=$(podman ps -aq --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME")
    [ -z "$left" ] || podman rm -f -t 25 $left >/dev/null 2>&1
}

served() { curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$HTTP_PORT$1"; }

up() {
    local started=$SECONDS
    choose_engine
    secret_key
    build_images
    compose_files
    if [ "$ENGINE" = docker ]; then
        "${COMPOSE[@]}" "${FILES[@]}" up -d --no-build --wait --wait-timeout "$WAIT_SECONDS"
    else
        # podman-compose starts containers in dependency order but waits for no condition (and podman
        # runs no healthcheck without systemd): the conditions of docker-compose.yml are waited for here.
        # podman-compose starts an existing container as it was made, with its old settings: the
        # containers are made afresh each time (the data is in the volumes).
        remove_containers
        : >"var/compose-$COMPOSE_PROJECT_NAME.log" 2>/dev/null || true
        compose up -d --no-build postgres redis
        wait_for PostgreSQL podman exec "$(container postgres)" pg_isready -U tavernkeep -d tavernkeep
        wait_for Redis podman exec "$(container redis)" redis-cli ping
        say "PostgreSQL and Redis answer; migrating"
        compose up -d --no-build --no-deps migrate
        local code
        code=$(podman wait "$(container migrate)")
        [ "$code" = 0 ] || { podman logs --tail 30 "$(container migrate)" >&2; fail "migrate exited with $code"; }
        compose up -d --no-build --no-deps api web worker beat proxy
    fi
    # The proxy's healthcheck asks a container of each pool through Caddy (docker-compose.yml);
    # then a page through the published port, as a browser asks.
    [ "$ENGINE" = docker ] || wait_for "a container of each pool through Caddy" podman healthcheck run "$(container proxy)"
    wait_for "a page through the published port" served /healthz
    say "Up in $((SECONDS - started)) s: open http://127.0.0.1:$HTTP_PORT/ (create a user with:" \
        "$ENGINE exec -it $(container api) python manage.py createsuperuser)"
}

down() {
    choose_engine
    secret_key
    compose_files
    local volumes=()
    [ "${1:-}" = -v ] && volumes=(-v)
    "${COMPOSE[@]}" "${FILES[@]}" down "${volumes[@]}" >/dev/null 2>&1 || true
    if [ "$ENGINE" = podman ]; then
        # Containers of replicas scaled up after `up` are not in the compose file's count: removed too.
        remove_containers
        if [ "${1:-}" = -v ]; then
            local vols
            vols=$(podman volume ls -q --filter "label=io.podman.compose.project=$COMPOSE_PROJECT_NAME")
            [ -z "$vols" ] || podman volume rm -f $vols >/dev/null
        fi
        podman network rm "${COMPOSE_PROJECT_NAME}_default" >/dev/null 2>&1 || true
    fi
    say "Stack $COMPOSE_PROJECT_NAME is down${volumes:+ and its volumes removed}"
}

scale() {
    local service=${1%%=*} count=${1#*=}
    [[ "$service" =~ ^(web|api|worker)$ && "$count" =~ ^[1-9][0-9]?$ ]] || fail "scale takes web=N, api=N or worker=N"
    choose_engine
    secret_key
    compose_files
    if [ "$ENGINE" = docker ]; then
        "${COMPOSE[@]}" "${FILES[@]}" up -d --no-build --no-deps --scale "$service=$count" "$service"
    else
        # podman-compose reads the count from deploy.replicas (WEB_REPLICAS, …) and ignores --scale;
        # it never removes a container, so those past the count are stopped and removed here.
        export "${service^^}_REPLICAS=$count"
        compose up -d --no-build --no-deps "$service"
        local name number
        podman ps -a --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
            --filter "label=com.docker.compose.service=$service" \
            --format '{{.Names}} {{index .Labels "com.docker.compose.container-number"}}' |
            while read -r name number; do
                [ "$number" -le "$count" ] || podman rm -f -t 20 "$name" >/dev/null
            done
    fi
    say "$service: $count container(s)"
}

case "${1:-}" in
    up) up ;;
    down) shift; down "$@" ;;
    build) choose_engine; secret_key; build_images ;;
    scale) scale "${2:-}" ;;
    *) fail "usage: deploy/stack.sh up | down [-v] | build | scale SERVICE=N" ;;
esac
