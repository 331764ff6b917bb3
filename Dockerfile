FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=0 SECRET_KEY=build python manage.py collectstatic --noinput
RUN useradd --create-home tavern && chown -R tavern /app
USER tavern
EXPOSE 8000
