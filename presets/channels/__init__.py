"""Presets per channel: the admins' choice of a preset for a channel or thread, written by services,
cached beside the active preset, and the form on the presets page."""
