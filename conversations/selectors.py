"""Reads for sample conversations: the list, one thread with its replayed state, preview inputs."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from engine.macros import Op, OpError, ops_from_json, replay_steps, to_text
from servers.models import Server

from .models import ConversationMessage, SampleConversation, Swipe


def conversations_for(server: Server) -> QuerySet[SampleConversation]:
    """The server's sample conversations by name, each annotated with `message_count`."""
    return server.sample_conversations.annotate(message_count=Count("messages")).order_by("name", "id")


def conversation_choices(server_id: int) -> list[tuple[int, str]]:
    """(id, name) of the server's sample conversations, for a select."""
    return list(
        SampleConversation.objects.filter(server_id=server_id)
        .order_by("name", "id")
        .values_list("id", "name")
    )


def stored_ops(swipe: Swipe) -> tuple[tuple[Op, ...], str | None]:
    """The swipe's ops, or () and a sentence when the stored list is malformed."""
    try:
        return ops_from_json(swipe.ops), None
    except OpError as error:
        return (), f"The stored ops of this message could not be read ({error}); they were left out."


@dataclass(frozen=True, slots=True)
class VariableRow:
    key: str
    text: str  # as {{getvar}} prints it
    changed: bool  # written or removed by this message


@dataclass(frozen=True, slots=True)
class MessageView:
    """One message as the thread shows it: its current swipe, its ops and the state after it."""

    message: ConversationMessage
    swipes: tuple[Swipe, ...]
    current: Swipe
    swipe_number: int  # 1-based position of the current swipe
    ops: tuple[Op, ...]
    variables: tuple[VariableRow, ...]
    removed: tuple[str, ...]  # keys this message removed
    warnings: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.current.text


@dataclass(frozen=True, slots=True)
class Thread:
    """A whole conversation: its messages in order and the final replayed state."""

    conversation: SampleConversation
    messages: tuple[MessageView, ...]
    variables: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    @property
    def variable_rows(self) -> tuple[VariableRow, ...]:
        return tuple(VariableRow(key, to_text(value), False) for key, value in sorted(self.variables.items()))


def _messages_with_swipes(conversation: SampleConversation) -> list[ConversationMessage]:
    return list(
        conversation.messages.order_by("position", "id").prefetch_related(
            Prefetch("swipes", queryset=Swipe.objects.order_by("id"))
        )
    )


def _current(message: ConversationMessage) -> tuple[tuple[Swipe, ...], Swipe, int]:
    swipes = tuple(message.swipes.all())
    for number, swipe in enumerate(swipes, start=1):
        if swipe.is_current:
            return swipes, swipe, number
    # No current swipe should not happen (the services keep one); the last one stands in.
    return swipes, swipes[-1], len(swipes)


def conversation_thread(conversation: SampleConversation) -> Thread:
    """The conversation with every message's current swipe, ops and replayed state (two queries)."""
    messages = [message for message in _messages_with_swipes(conversation) if message.swipes.all()]
    picked = [_current(message) for message in messages]
    read = [stored_ops(current) for _, current, _ in picked]
    steps = replay_steps([ops for ops, _ in read])
    views: list[MessageView] = []
    before: dict[str, Any] = {}
    warnings: list[str] = []
    for message, (swipes, current, number), (ops, problem), step in zip(
        messages, picked, read, steps, strict=True
    ):
        after = step.variables
        rows = tuple(
            VariableRow(key, to_text(value), key not in before or before[key] != value)
            for key, value in sorted(after.items())
        )
        removed = tuple(sorted(key for key in before if key not in after))
        message_warnings = ((problem,) if problem else ()) + step.warnings
        warnings.extend(f"Message {len(views) + 1}: {warning}" for warning in message_warnings)
        views.append(MessageView(message, swipes, current, number, ops, rows, removed, message_warnings))
        before = after
    return Thread(conversation, tuple(views), dict(before), tuple(warnings))


def state_before(message: ConversationMessage) -> dict[str, Any]:
    """The variables the messages before `message` produce (what its extraction runs against)."""
    earlier = [
        item
        for item in _messages_with_swipes(message.conversation)
        if item.position < message.position and item.swipes.all()
    ]
    steps = replay_steps([stored_ops(_current(item)[1])[0] for item in earlier])
    return steps[-1].variables if steps else {}


def conversation_variables(conversation: SampleConversation) -> dict[str, Any]:
    """The conversation's variable state: the replay of every current swipe's ops from empty."""
    return conversation_thread(conversation).variables


def conversation_history(thread: Thread) -> list[dict[str, Any]]:
    """The visible messages in the bucket document's `history` shape
    (docs/assembly.md#the-bucket-document)."""
    return [
        {
            "role": view.message.role,
            "name": view.message.speaker,
            "content": view.text,
            "timestamp": view.message.timestamp.isoformat(),
        }
        for view in thread.messages
    ]


def preview_inputs(
    server_id: int, conversation_id: int, message: int | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """(history, variables) of one of the server's sample conversations for the preview, or None:
    the messages up to `message` (1-based; None or past the end: all) and the variables they leave."""
    conversation = SampleConversation.objects.filter(server_id=server_id, pk=conversation_id).first()
    if conversation is None:
        return None
    thread = conversation_thread(conversation)
    if message is None or message >= len(thread.messages):
        return conversation_history(thread), thread.variables
    upto = max(message, 1)
    shown = replace(thread, messages=thread.messages[:upto])
    steps = replay_steps([view.ops for view in shown.messages])
    return conversation_history(shown), steps[-1].variables if steps else {}
