"""How the Hermes gateway's sends map onto the A2A task they answer.

Hermes sends a turn's final reply with ``reply_to`` = the event's
``message_id`` (here: the A2A task id) and ``metadata["notify"] = True``.
Every other send is progress or a status notice. Notices answer nothing and
must never end or pollute a task: the first-contact "No home channel is
set…" (sent with no reply_to), and the busy-session acknowledgements
("⚡ Interrupting current task…", "⏳ Queued for the next turn…", …) that the
gateway sends with reply_to = the *new* message.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from agentplugin_host import pb

#: A final reply starting with this is a question: the task needs input.
INPUT_REQUIRED_PREFIX = "[INPUT_REQUIRED]"

#: The beginnings of the gateway's status notices (gateway/run.py: the
#: busy-session acks, drain notices and the first-contact notice).
NOTICE_PREFIXES = (
    "⚡ Interrupting current task",
    "⏳ Queued for the next turn",
    "⏩ Steered into current run",
    "↪ Redirected current run",
    "⏳ Subagent working",
    "⏳ Compressing context",
    "⏳ Gateway",
    "📬 No home channel is set",
)


def reply_anchor(reply_to: Optional[str], metadata: Optional[Mapping[str, Any]]) -> Optional[str]:
    """The message a send answers: reply_to, or the stream consumer's
    reply_to_message_id."""
    if reply_to:
        return str(reply_to)
    anchor = (metadata or {}).get("reply_to_message_id")
    return str(anchor) if anchor else None


def is_final(metadata: Optional[Mapping[str, Any]]) -> bool:
    """Whether Hermes marked the send as the turn's user-visible reply."""
    return bool((metadata or {}).get("notify"))


def is_notice(content: str) -> bool:
    """Whether content is one of the gateway's status notices."""
    text = (content or "").lstrip()
    return any(text.startswith(p) for p in NOTICE_PREFIXES)


def final_kind(text: str) -> tuple[int, str]:
    """The Send kind and text of a final reply: a question when it starts
    with [INPUT_REQUIRED] (the prefix removed), else FINAL."""
    stripped = (text or "").strip()
    if stripped.startswith(INPUT_REQUIRED_PREFIX):
        return pb.SEND_KIND_INPUT_REQUIRED, stripped[len(INPUT_REQUIRED_PREFIX):].strip()
    return pb.SEND_KIND_FINAL, text
