# BASE: any image with Python 3.11 as `python` and `pip` on PATH. The official one by default;
# deploy/stack.sh passes one built from a local Debian base where Docker Hub cannot be reached.
ARG BASE=python:3.11-slim
FROM ${BASE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
RUN useradd --create-home tavern && mkdir /app && chown tavern /app
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir .
# Owned by the app's user as it is copied: a `chown -R` afterwards would store every file twice.
COPY --chown=tavern . .
# The app's modules compiled once here: with PYTHONDONTWRITEBYTECODE nothing is ever cached at run
# time, so every process (each `manage.py` command, each server start) compiled the sources it
# imports again: a third of a second of CPU for a lorebook import from the command line.
RUN python -m compileall -q -x '/(tests|node_modules)/' /app
RUN DEBUG=0 SECRET_KEY=build python manage.py collectstatic --noinput && chown -R tavern /app/staticfiles
USER tavern
EXPOSE 8000
