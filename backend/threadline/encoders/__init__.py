"""Wire encoders: each turns the canonical event stream into the bytes of one protocol."""
