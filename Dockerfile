# The chat page, built once with Node; only its static files reach the final image.
FROM node:20-slim AS frontend
WORKDIR /frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend ./
RUN npm run build

FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.lock
COPY backend ./backend
RUN pip install --no-cache-dir --no-deps . && mkdir /data && chown nobody /data
COPY --from=frontend /frontend/dist ./frontend/dist
# The data directory holds the generated signing secret (and the embedded database without DATABASE_URL).
ENV THREADLINE_DATA_DIR=/data THREADLINE_FRONTEND_DIR=/app/frontend/dist
VOLUME /data
USER nobody
EXPOSE 8000
CMD ["threadline", "serve"]
