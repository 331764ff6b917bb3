# BASE: any image with Python 3.11 as `python` and `pip` on PATH. The official one by default;
# deploy/stack.sh passes one built from a local Debian base where Docker Hub cannot be reached.
ARG BASE=python:3.11-slim
FROM ${BASE}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=0 SECRET_KEY=build python manage.py collectstatic --noinput
RUN useradd --create-home tavern && chown -R tavern /app
USER tavern
EXPOSE 8000
