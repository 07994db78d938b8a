FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.lock
COPY backend ./backend
RUN pip install --no-cache-dir --no-deps . && mkdir /data && chown nobody /data
# The data directory holds the generated signing secret (and the embedded database without DATABASE_URL).
ENV THREADLINE_DATA_DIR=/data
VOLUME /data
USER nobody
EXPOSE 8000
CMD ["threadline", "serve"]
