"""Seeing what every answer did: its trace (`trace`), kept per visitor (storage/traces.py), counted in
Prometheus metrics (`metrics`), exported as OpenTelemetry spans (`otel`) and Langfuse traces
(`langfuse_callbacks`), all fed from one place (`answers`) that answers/turn.py attaches to each answer."""
