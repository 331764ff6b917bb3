"""The preset editor: node edits as versioned writes (services) and the in-place htmx views."""
