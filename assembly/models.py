# Sample buckets: the preview's saved inputs (sample conversations are the conversations app).
from .bucket_models import *  # noqa: F403
