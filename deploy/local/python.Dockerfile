# Python 3.11 on the local Debian base: what the app's Dockerfile needs from python:3.11-slim
# (`python` and `pip` on PATH, installs that do not touch the system's Python).
ARG DEBIAN_BASE=localhost/debian:bookworm
FROM ${DEBIAN_BASE}
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/python
ENV PATH=/opt/python/bin:$PATH LANG=C.UTF-8
