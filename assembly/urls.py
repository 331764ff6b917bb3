from .urls_conversations import urlpatterns as conversation_patterns
from .urls_preview import urlpatterns as preview_patterns

app_name = "assembly"
urlpatterns = [*preview_patterns, *conversation_patterns]
