"""The server's sampler settings: its choice (services write, selectors read), the cached copy an
assembly reads, and the panel on the preset page."""
