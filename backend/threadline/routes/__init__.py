"""Thin HTTP handlers: decode, run, encode."""
