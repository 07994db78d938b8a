# The chat page, built once with Node; only its static files reach the wheel.
FROM node:22-slim AS frontend
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend ./
RUN npm run build

# threadline's wheel, with the page inside it (what `python3 tasks.py wheel` builds).
FROM python:3.11-slim AS wheel
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY backend/threadline ./backend/threadline
COPY --from=frontend /frontend/dist ./backend/threadline/page
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

# What runs: the production lock (every extra, no development, benchmark or docs package; each file checked
# against its hash), then the wheel without dependencies of its own. Not root.
FROM python:3.11-slim
WORKDIR /app
COPY requirements/production.lock ./
RUN pip install --no-cache-dir --require-hashes -r production.lock
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir --no-deps /wheels/*.whl && rm -rf /wheels \
    && useradd --system --uid 10001 --home-dir /data threadline && mkdir /data && chown threadline /data
# The data directory holds the generated signing secret (and the embedded database without DATABASE_URL).
ENV THREADLINE_DATA_DIR=/data THREADLINE_HOST=0.0.0.0 PYTHONUNBUFFERED=1
VOLUME /data
USER threadline
EXPOSE 8000
# Ready once migrations are done and while the database answers (GET /health/ready).
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health/ready' % os.environ.get('THREADLINE_PORT', '8000'), timeout=2)"]
CMD ["threadline", "serve"]
