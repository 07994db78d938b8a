FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.lock
COPY backend ./backend
RUN pip install --no-cache-dir --no-deps .
USER nobody
EXPOSE 8000
CMD ["threadline", "serve"]
