# geon: one image for the web server and the worker (docker-compose.yml picks the command).

# --- the editor bundle ------------------------------------------------------------------------
FROM node:20-bookworm-slim AS editor
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/tsconfig.json frontend/vite.config.ts ./
COPY frontend/src ./src
# vite writes the bundle to ../geon/static/editor
RUN npm run build

# --- the Python application -------------------------------------------------------------------
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    GEON_DATA_DIR=/data
RUN useradd --create-home --uid 10001 geon \
 && mkdir -p /data && chown geon:geon /data
WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY geon ./geon
COPY templates ./templates
COPY --from=editor /src/geon/static/editor ./geon/static/editor
# Editable, so that templates/ and the bundle are found next to the package.
RUN pip install -e .
USER geon
VOLUME ["/data"]
EXPOSE 8000
ENV DJANGO_SETTINGS_MODULE=geon.settings
# Migrate, then exec the very command `geon serve` runs for its web server (geon.cli.serve's
# daphne_command: Daphne through geon.cli.daphne_main, the 4 MiB message limit closed with 1009,
# --proxy-headers when GEON_HTTPS=1), so the container and `make run` never drift apart.
CMD ["sh", "-c", "python manage.py migrate --noinput && exec python -c 'import os, sys; from geon.cli.serve import daphne_command; c = daphne_command(\"0.0.0.0\", 8000); os.execv(c[0], c)'"]
