# The app's models live in two modules, one per idea: sample buckets (the preview's inputs) and
# sample conversations (long chats with per-message variables).
from .bucket_models import *  # noqa: F403
from .conversation_models import *  # noqa: F403
