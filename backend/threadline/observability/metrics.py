"""Prometheus metrics of the answers, served at /metrics (http/app.py, with Litestar's PrometheusController).

Each process counts its own answers: with several processes, scrape each one (or set
PROMETHEUS_MULTIPROC_DIR, which the controller then aggregates). Labels take only bounded values:
outcomes, error codes, and the names of the configured tools.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from threadline.storage.trace_document import ToolCall, Trace

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)

RUNNING = Gauge("threadline_answers_running", "Answers streaming now in this process")
FIRST_TOKEN = Histogram(
    "threadline_first_token_seconds", "From the request to the answer's first output", buckets=_LATENCY_BUCKETS
)
TOTAL = Histogram("threadline_answer_seconds", "From the request to the answer's end", buckets=_LATENCY_BUCKETS)
ANSWERS = Counter("threadline_answers", "Answers by outcome and error code", ["outcome", "error_code"])
TOKENS = Counter("threadline_tokens", "Model tokens as the provider reported them", ["direction"])
TOOL_CALLS = Counter("threadline_tool_calls", "Tool calls by tool and outcome", ["tool", "outcome"])


def count(trace: Trace) -> None:
    """Add one ended answer to the metrics."""
    if trace.first_token_ms is not None:
        FIRST_TOKEN.observe(trace.first_token_ms / 1000)
    if trace.total_ms is not None:
        TOTAL.observe(trace.total_ms / 1000)
    ANSWERS.labels(trace.status, trace.error_code or "").inc()
    TOKENS.labels("input").inc(trace.usage.input_tokens)
    TOKENS.labels("output").inc(trace.usage.output_tokens)
    for step in trace.events:
        if isinstance(step, ToolCall):
            tool = step.tool if step.server else "(unknown tool)"  # a name the model made up: no new series
            TOOL_CALLS.labels(tool, "error" if step.error is not None else "ok").inc()
