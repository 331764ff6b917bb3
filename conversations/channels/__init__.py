"""Channel conversations: the bot's Discord chat, stored as it reports it, with Luker's per-message
variables replayed on every change (docs/channels.md)."""
