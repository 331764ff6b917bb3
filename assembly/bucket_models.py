"""Sample bucket documents kept per server for the preview (SPEC §3.2)."""
