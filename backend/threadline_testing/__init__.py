"""What threadline's own tests, browser tests and benchmarks share: free ports, a fresh PostgreSQL database,
stand-ins for the model providers, and the real AI SDK client code reading our streams.

Public on purpose, so a team extending threadline can test its additions the same way.
"""
