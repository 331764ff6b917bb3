"""Sample conversations with swipes and per-message variable ops (SPEC §6)."""
