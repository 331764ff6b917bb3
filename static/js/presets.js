// presets behaviour
