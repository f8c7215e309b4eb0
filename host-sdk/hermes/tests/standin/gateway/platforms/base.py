"""Stand-in for gateway.platforms.base: BasePlatformAdapter and the types
of a platform's traffic (see ../../README.md).

The behaviour a platform plugin sees is Hermes': ``handle_message`` keys
the session, and when the session is free installs its guard and spawns
the turn as a background task and returns. When the session is busy the
message goes to the gateway's busy-session handler (which, in Hermes'
default interrupt mode, queues it as the session's pending message and
interrupts the running agent; the *runner* then answers it inside the
running turn, see gateway/run.py) — only when that handler declines does
the adapter keep it as the pending follow-up, drained after the turn.

The background task runs ``on_processing_start``, a typing refresh
(``send_typing`` every 2 s), the gateway's message handler, sends the
final reply — every send keyword-only, ``send(chat_id=…, content=…,
reply_to=event.message_id, metadata={"notify": True})``; a failed send is
retried (retryable) or re-sent as plain text, both with the same reply_to
and notify — then images of the reply (Markdown image URLs) through
``send_multiple_images`` and its ``MEDIA:<path>`` files by type
(``send_image_file``/``send_video``/``send_voice``/``send_document``), all
with notify, then ``on_processing_complete`` with SUCCESS (also when the
model failed: the error is the reply), FAILURE (delivery failed or the
handler raised; an error notice follows, without reply_to or notify) or
CANCELLED (the task was cancelled through ``cancel_session_processing``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from gateway.config import Platform, PlatformConfig
from gateway.session import SessionSource, SessionStore, build_session_key

logger = logging.getLogger(__name__)

_AUDIO_EXTS = {".ogg", ".opus", ".mp3", ".m2a", ".wav", ".m4a", ".flac"}
_VIDEO_EXTS = {".mp4", ".mov", ".avi", ".mkv", ".webm", ".3gp"}
_IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".webp", ".gif"}


class MessageType(Enum):
    TEXT = "text"
    LOCATION = "location"
    PHOTO = "photo"
    VIDEO = "video"
    AUDIO = "audio"
    VOICE = "voice"
    DOCUMENT = "document"
    STICKER = "sticker"
    COMMAND = "command"


class ProcessingOutcome(Enum):
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"


@dataclass
class MessageEvent:
    """An incoming message, as every adapter produces it."""

    text: str
    message_type: MessageType = MessageType.TEXT
    user_id: Optional[str] = None
    user_name: Optional[str] = None
    source: SessionSource = None  # type: ignore[assignment]
    raw_message: Any = None
    message_id: Optional[str] = None
    platform_update_id: Optional[int] = None
    media_urls: List[str] = field(default_factory=list)
    media_types: List[str] = field(default_factory=list)
    reply_to_message_id: Optional[str] = None
    reply_to_text: Optional[str] = None
    reply_to_author_id: Optional[str] = None
    reply_to_author_name: Optional[str] = None
    reply_to_is_own_message: bool = False
    prompt_response: Optional[Dict[str, Any]] = None
    auto_skill: Any = None
    channel_prompt: Optional[str] = None
    channel_context: Optional[str] = None
    internal: bool = False
    metadata: Dict[str, Any] = field(default_factory=dict)
    timestamp: datetime = field(default_factory=datetime.now)
    allow_gateway_control: bool = True

    def is_command(self) -> bool:
        return self.allow_gateway_control and (self.text or "").lstrip().startswith("/")

    def get_command(self) -> Optional[str]:
        if not self.is_command():
            return None
        parts = (self.text or "").lstrip().split(maxsplit=1)
        raw = parts[0][1:].lower() if parts else None
        if raw and "@" in raw:
            raw = raw.split("@", 1)[0]
        if raw and "/" in raw:
            return None
        return raw

    def get_command_args(self) -> str:
        if not self.is_command():
            return self.text
        parts = (self.text or "").lstrip().split(maxsplit=1)
        return parts[1] if len(parts) > 1 else ""


@dataclass
class SendResult:
    success: bool
    message_id: Optional[str] = None
    error: Optional[str] = None
    raw_response: Any = None
    retryable: bool = False
    retry_after: Optional[float] = None
    continuation_message_ids: tuple = ()
    error_kind: Optional[str] = None


MessageHandler = Callable[[MessageEvent], Awaitable[Optional[str]]]

#: Commands that bypass the active-session guard; the first three cancel
#: the running turn (Hermes' command registry: interrupt_then_dispatch).
_BYPASS_COMMANDS = {"stop", "new", "reset", "approve", "deny", "status", "background", "restart"}
_INTERRUPT_THEN_DISPATCH = {"stop", "new", "reset"}
_PLAINTEXT_RESTART = (re.compile(r"^(please\s+)?restart(\s+the)?\s+gateway[.!]?$", re.I),)


def _mark_notify_metadata(metadata: Optional[dict]) -> dict:
    out = dict(metadata) if metadata else {}
    out["notify"] = True
    return out


def _reply_anchor_for_event(event: Any) -> Optional[str]:
    """The reply_to of a final reply: the event's message_id (Hermes'
    exceptions are all Telegram/Slack/Feishu threading cases)."""
    return getattr(event, "message_id", None)


def _thread_metadata_for_source(source: Any, reply_to_message_id: Optional[str] = None) -> Optional[dict]:
    thread_id = getattr(source, "thread_id", None)
    return {"thread_id": thread_id} if thread_id is not None else None


def coerce_plaintext_gateway_command(event: MessageEvent) -> None:
    """A DM's exact "restart gateway" phrase becomes /restart."""
    if event is None or event.message_type != MessageType.TEXT:
        return
    text = (event.text or "").strip()
    if not text or text.startswith("/") or getattr(event.source, "chat_type", None) != "dm":
        return
    if any(p.match(text) for p in _PLAINTEXT_RESTART):
        event.text = "/restart"


def merge_pending_message_event(pending: Dict[str, MessageEvent], session_key: str, event: MessageEvent,
                                *, merge_text: bool = False) -> None:
    """Keep event as the session's pending message: photo bursts merge
    their media, consecutive text follow-ups are joined when merge_text;
    otherwise event replaces the slot."""
    existing = pending.get(session_key)
    if existing is not None:
        if existing.message_type == MessageType.PHOTO and event.message_type == MessageType.PHOTO:
            existing.media_urls.extend(event.media_urls)
            existing.media_types.extend(event.media_types)
            if event.text:
                existing.text = f"{existing.text}\n{event.text}" if existing.text else event.text
            return
        if merge_text and existing.message_type == MessageType.TEXT and event.message_type == MessageType.TEXT:
            existing.text = f"{existing.text}\n{event.text}"
            return
    pending[session_key] = event


def validate_media_delivery_path(path: str) -> Optional[str]:
    """An existing regular file's resolved absolute path, else None
    (Hermes' default, non-strict mode, less its credential denylist)."""
    candidate = str(path or "").strip().strip("`\"'")
    if not candidate:
        return None
    p = Path(os.path.expanduser(candidate))
    if not p.is_absolute():
        return None
    try:
        resolved = p.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    return str(resolved) if resolved.is_file() else None


class BasePlatformAdapter(ABC):
    """Base of every platform adapter (see the module doc)."""

    supports_code_blocks: bool = False
    supports_status_text: bool = False
    supports_async_delivery: bool = True
    splits_long_messages: bool = False
    typed_command_prefix: str = "/"
    interactive_resume: bool = True
    #: Set by gateway/run.py when it creates the adapter.
    gateway_runner = None  # type: ignore[assignment]

    def __init__(self, config: PlatformConfig, platform: Platform):
        self.config = config
        self.platform = platform
        self._message_handler: Optional[MessageHandler] = None
        self._fatal_error_handler: Optional[Callable[["BasePlatformAdapter"], Any]] = None
        self._busy_session_handler: Optional[Callable[[MessageEvent, str], Awaitable[bool]]] = None
        self._authorization_check: Optional[Callable[..., bool]] = None
        self._running = False
        self._fatal_error_code: Optional[str] = None
        self._fatal_error_message: Optional[str] = None
        self._fatal_error_retryable = True
        self._active_sessions: Dict[str, asyncio.Event] = {}
        self._pending_messages: Dict[str, MessageEvent] = {}
        self._session_tasks: Dict[str, asyncio.Task] = {}
        self._busy_text_mode: str = (os.environ.get("HERMES_GATEWAY_BUSY_TEXT_MODE", "interrupt").strip().lower()
                                     or "interrupt")
        self._background_tasks: set = set()
        self._post_delivery_callbacks: Dict[str, Any] = {}
        self._expected_cancelled_tasks: set = set()
        self._session_store: Any = None
        self._typing_paused: set = set()

    # -- identity and state ----------------------------------------------

    @property
    def name(self) -> str:
        return self.platform.value.title()

    @property
    def is_connected(self) -> bool:
        return self._running

    @property
    def enforces_own_access_policy(self) -> bool:
        return False

    @property
    def authorization_is_upstream(self) -> bool:
        """True when a trusted upstream authorized the platform's senders
        (the gateway's allow-lists then do not apply)."""
        return False

    @property
    def has_fatal_error(self) -> bool:
        return self._fatal_error_message is not None

    @property
    def fatal_error_message(self) -> Optional[str]:
        return self._fatal_error_message

    @property
    def fatal_error_code(self) -> Optional[str]:
        return self._fatal_error_code

    @property
    def fatal_error_retryable(self) -> bool:
        return self._fatal_error_retryable

    def _mark_connected(self) -> None:
        self._running = True
        self._fatal_error_code = self._fatal_error_message = None
        self._fatal_error_retryable = True

    def _mark_disconnected(self) -> None:
        self._running = False

    def _set_fatal_error(self, code: str, message: str, *, retryable: bool) -> None:
        self._running = False
        self._fatal_error_code, self._fatal_error_message, self._fatal_error_retryable = code, message, retryable

    def set_message_handler(self, handler: MessageHandler) -> None:
        self._message_handler = handler

    def set_fatal_error_handler(self, handler: Callable[["BasePlatformAdapter"], Any]) -> None:
        self._fatal_error_handler = handler

    def set_busy_session_handler(self, handler: Optional[Callable[[MessageEvent, str], Awaitable[bool]]]) -> None:
        self._busy_session_handler = handler

    def set_authorization_check(self, check: Optional[Callable[..., bool]]) -> None:
        self._authorization_check = check

    def set_session_store(self, session_store: Any) -> None:
        self._session_store = session_store

    # -- what subclasses write ----------------------------------------------

    @abstractmethod
    async def connect(self, *, is_reconnect: bool = False) -> bool: ...

    @abstractmethod
    async def disconnect(self) -> None: ...

    @abstractmethod
    async def send(self, chat_id: str, content: str, reply_to: Optional[str] = None,
                   metadata: Optional[Dict[str, Any]] = None) -> SendResult: ...

    @abstractmethod
    async def get_chat_info(self, chat_id: str) -> Dict[str, Any]: ...

    async def edit_message(self, chat_id: str, message_id: str, content: str, *, finalize: bool = False) -> SendResult:
        return SendResult(success=False, error="Not supported")

    async def send_typing(self, chat_id: str, metadata: Any = None) -> None:
        return None

    async def stop_typing(self, chat_id: str) -> None:
        return None

    async def send_image(self, chat_id: str, image_url: str, caption: Optional[str] = None,
                         reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None) -> SendResult:
        """Default: the URL as text."""
        text = f"{caption}\n{image_url}" if caption else image_url
        return await self.send(chat_id=chat_id, content=text, reply_to=reply_to, metadata=metadata)

    async def send_animation(self, chat_id: str, animation_url: str, caption: Optional[str] = None,
                             reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None) -> SendResult:
        return await self.send_image(chat_id=chat_id, image_url=animation_url, caption=caption, reply_to=reply_to,
                                     metadata=metadata)

    async def _cannot_deliver(self, what: str, chat_id: str, caption: Optional[str], reply_to: Optional[str],
                              metadata: Optional[Dict[str, Any]]) -> SendResult:
        text = f"⚠️ Couldn't deliver the {what}."
        if caption:
            text = f"{caption}\n{text}"
        return await self.send(chat_id=chat_id, content=text, reply_to=reply_to, metadata=metadata)

    async def send_voice(self, chat_id: str, audio_path: str, caption: Optional[str] = None,
                         reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                         **kwargs: Any) -> SendResult:
        return await self._cannot_deliver("audio attachment", chat_id, caption, reply_to, metadata)

    async def send_video(self, chat_id: str, video_path: str, caption: Optional[str] = None,
                         reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                         **kwargs: Any) -> SendResult:
        return await self._cannot_deliver("video attachment", chat_id, caption, reply_to, metadata)

    async def send_document(self, chat_id: str, file_path: str, caption: Optional[str] = None,
                            file_name: Optional[str] = None, reply_to: Optional[str] = None,
                            metadata: Optional[Dict[str, Any]] = None, **kwargs: Any) -> SendResult:
        return await self._cannot_deliver(f"file attachment ({file_name})" if file_name else "file attachment",
                                          chat_id, caption, reply_to, metadata)

    async def send_image_file(self, chat_id: str, image_path: str, caption: Optional[str] = None,
                              reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                              **kwargs: Any) -> SendResult:
        return await self._cannot_deliver("image attachment", chat_id, caption, reply_to, metadata)

    async def send_multiple_images(self, chat_id: str, images: List[Tuple[str, str]],
                                   metadata: Optional[Dict[str, Any]] = None, human_delay: float = 0.0) -> None:
        """Each image on its own: file:// through send_image_file, GIFs
        through send_animation, others through send_image."""
        from urllib.parse import unquote

        for url, alt in images:
            if human_delay > 0:
                await asyncio.sleep(human_delay)
            try:
                if url.startswith("file://"):
                    r = await self.send_image_file(chat_id=chat_id, image_path=unquote(url[7:]), caption=alt or None,
                                                   metadata=metadata)
                elif url.lower().split("?")[0].endswith(".gif"):
                    r = await self.send_animation(chat_id=chat_id, animation_url=url, caption=alt or None,
                                                  metadata=metadata)
                else:
                    r = await self.send_image(chat_id=chat_id, image_url=url, caption=alt or None, metadata=metadata)
                if not r.success:
                    logger.error("[%s] Failed to send image: %s", self.name, r.error)
            except Exception as e:
                logger.error("[%s] Error sending image: %s", self.name, e, exc_info=True)

    @staticmethod
    def extract_images(content: str) -> Tuple[List[Tuple[str, str]], str]:
        """Markdown/HTML image URLs of a reply (image extensions only), and
        the reply without them."""
        md = r'!\[([^\]]*)\]\((https?://[^\s\)]+)\)'
        images = [(m[2], m[1]) for m in re.finditer(md, content or "")
                  if any(m[2].lower().endswith(e) or e in m[2].lower()
                         for e in (".png", ".jpg", ".jpeg", ".gif", ".webp"))]
        if not images:
            return images, content
        urls = {u for u, _ in images}
        cleaned = re.sub(md, lambda m: "" if m[2] in urls else m[0], content)
        return images, re.sub(r"\n{3,}", "\n\n", cleaned).strip()

    @staticmethod
    def extract_media(content: str) -> Tuple[List[Tuple[str, bool]], str]:
        """``MEDIA:<path>`` lines of a reply as (path, is_voice), and the
        reply without them (and without [[audio_as_voice]]/[[as_document]])."""
        voice = "[[audio_as_voice]]" in (content or "")
        files, keep = [], []
        for line in (content or "").replace("[[audio_as_voice]]", "").replace("[[as_document]]", "").splitlines():
            s = line.strip()
            if s.startswith("MEDIA:"):
                files.append((s[len("MEDIA:"):].strip(), voice))
            else:
                keep.append(line)
        return files, "\n".join(keep).strip()

    @staticmethod
    def filter_media_delivery_paths(media_files: Any) -> List[Tuple[str, bool]]:
        out = []
        for path, is_voice in media_files or []:
            safe = validate_media_delivery_path(path)
            if safe:
                out.append((safe, bool(is_voice)))
            else:
                logger.warning("Skipping unsafe MEDIA directive path: %s", path)
        return out

    def toolsets_for_source(self, source: SessionSource) -> Optional[List[str]]:
        """Per-source toolsets replacing platform_toolsets.<platform> for the
        turn, or None. The gateway uses the list only when it is non-empty
        (see gateway/run.py)."""
        return None

    async def on_processing_start(self, event: MessageEvent) -> None:
        """Hook: background processing of event begins."""

    async def on_processing_complete(self, event: MessageEvent, outcome: ProcessingOutcome) -> None:
        """Hook: background processing of event ended with outcome."""

    async def _run_processing_hook(self, hook_name: str, *args: Any, **kwargs: Any) -> None:
        hook = getattr(self, hook_name, None)
        if not callable(hook):
            return
        try:
            await hook(*args, **kwargs)
        except Exception as e:
            logger.warning("[%s] %s hook failed: %s", self.name, hook_name, e)

    # -- helpers -------------------------------------------------------------

    def build_source(self, chat_id: str, chat_name: Optional[str] = None, chat_type: str = "dm",
                     user_id: Optional[str] = None, user_name: Optional[str] = None, thread_id: Optional[str] = None,
                     chat_topic: Optional[str] = None, user_id_alt: Optional[str] = None,
                     chat_id_alt: Optional[str] = None, is_bot: bool = False, scope_id: Optional[str] = None,
                     guild_id: Optional[str] = None, parent_chat_id: Optional[str] = None,
                     message_id: Optional[str] = None, role_authorized: bool = False,
                     auto_thread_created: bool = False, auto_thread_initial_name: Optional[str] = None) -> SessionSource:
        """A SessionSource of this platform; the profile comes from the
        gateway runner's profile routes when one is set."""
        if chat_topic is not None and not chat_topic.strip():
            chat_topic = None
        kw = dict(platform=self.platform, chat_id=str(chat_id), chat_name=chat_name, chat_type=chat_type,
                  user_id=str(user_id) if user_id else None, user_name=user_name,
                  thread_id=str(thread_id) if thread_id else None, chat_topic=chat_topic.strip() if chat_topic else None,
                  user_id_alt=user_id_alt, chat_id_alt=chat_id_alt, is_bot=is_bot,
                  scope_id=str(scope_id) if scope_id else None, guild_id=str(guild_id) if guild_id else None,
                  parent_chat_id=str(parent_chat_id) if parent_chat_id else None,
                  message_id=str(message_id) if message_id else None)
        profile = None
        rejected = False
        runner = getattr(self, "gateway_runner", None)
        if runner is not None:
            try:
                profile = runner._profile_name_for_source(SessionSource(**kw))
            except LookupError:
                rejected = True
            except Exception:
                logger.warning("Profile resolution failed for %s/%s", self.platform, chat_id, exc_info=True)
        source = SessionSource(**kw, profile=profile, role_authorized=role_authorized,
                               auto_thread_created=auto_thread_created,
                               auto_thread_initial_name=auto_thread_initial_name)
        source.profile_route_rejected = rejected
        return source

    def _unwrap_ephemeral(self, response: Any) -> Tuple[Optional[str], int]:
        return response, 0

    def _final_delivery_adapter(self, source: Optional[SessionSource]) -> "BasePlatformAdapter":
        """The runner's live adapter of this platform (a reconnect may have
        replaced this one while its turn ran), else this one."""
        runner = getattr(self, "gateway_runner", None)
        resolve = getattr(runner, "_adapter_for_source", None)
        if not callable(resolve):
            return self
        try:
            live = resolve(source)
        except Exception:
            return self
        if not isinstance(live, BasePlatformAdapter) or live.platform != self.platform:
            return self
        return live

    @staticmethod
    def _is_retryable_error(error: Optional[str]) -> bool:
        e = (error or "").lower()
        return any(p in e for p in ("connecterror", "connectionerror", "connection reset", "connection refused",
                                    "network", "broken pipe", "remotedisconnected", "eoferror"))

    @staticmethod
    def _is_timeout_error(error: Optional[str]) -> bool:
        e = (error or "").lower()
        return "timed out" in e or "readtimeout" in e or "writetimeout" in e

    async def _send_with_retry(self, chat_id: str, content: str, reply_to: Optional[str] = None,
                               metadata: Any = None, max_retries: int = 2, base_delay: float = 2.0) -> SendResult:
        """send; a retryable failure is retried with backoff (then a
        "delivery failed" notice), a permanent one re-sent as plain text —
        both with the same reply_to and metadata."""
        result = await self.send(chat_id=chat_id, content=content, reply_to=reply_to, metadata=metadata)
        if result.success:
            return result
        error = result.error or ""
        network = result.retryable or self._is_retryable_error(error)
        if not network and self._is_timeout_error(error):
            return result
        if network:
            retry_after = result.retry_after
            for attempt in range(1, max_retries + 1):
                delay = retry_after if retry_after is not None else base_delay * (2 ** (attempt - 1))
                retry_after = None
                await asyncio.sleep(delay)
                result = await self.send(chat_id=chat_id, content=content, reply_to=reply_to, metadata=metadata)
                if result.success:
                    return result
                error = result.error or ""
                if result.retry_after is not None:
                    retry_after = result.retry_after
                if not (result.retryable or self._is_retryable_error(error)):
                    break
            else:
                try:
                    await self.send(chat_id=chat_id, content=(
                        "⚠️ Message delivery failed after multiple attempts. Please try again — your request was "
                        "processed but the response could not be sent."), reply_to=reply_to, metadata=metadata)
                except Exception:
                    pass
                return result
        return await self.send(chat_id=chat_id, content=f"(Response formatting failed, plain text:)\n\n{content[:3500]}",
                               reply_to=reply_to, metadata=metadata)

    async def _keep_typing(self, chat_id: str, interval: float = 2.0, metadata: Any = None,
                           stop_event: Optional[asyncio.Event] = None) -> None:
        try:
            while not (stop_event is not None and stop_event.is_set()):
                if chat_id not in self._typing_paused:
                    try:
                        await asyncio.wait_for(self.send_typing(chat_id, metadata=metadata), timeout=1.5)
                    except Exception as e:  # a slow or failing typing call is skipped, never fatal
                        logger.debug("[%s] send_typing error (non-fatal): %s", self.name, e)
                await asyncio.sleep(interval)
        except asyncio.CancelledError:
            pass
        finally:
            try:
                await self.stop_typing(chat_id)
            except Exception:
                pass

    async def _stop_typing_refresh(self, chat_id: str, typing_task: Optional[asyncio.Task]) -> None:
        if typing_task is not None and not typing_task.done():
            typing_task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(typing_task), timeout=0.5)
            except (asyncio.CancelledError, asyncio.TimeoutError):
                pass
        try:
            await self.stop_typing(chat_id)
        except Exception:
            pass

    def pause_typing_for_chat(self, chat_id: str) -> None:
        self._typing_paused.add(chat_id)

    def resume_typing_for_chat(self, chat_id: str) -> None:
        self._typing_paused.discard(chat_id)

    # -- sessions ------------------------------------------------------------

    async def interrupt_session_activity(self, session_key: str, chat_id: str, metadata: Any = None) -> None:
        """Signal the session's running turn to stop (the gateway's
        interrupt monitor turns it into agent.interrupt())."""
        if session_key:
            ev = self._active_sessions.get(session_key)
            if ev is not None:
                ev.set()
        try:
            await self.stop_typing(chat_id)
        except Exception:
            pass

    def has_pending_interrupt(self, session_key: str) -> bool:
        return session_key in self._active_sessions and self._active_sessions[session_key].is_set()

    def get_pending_message(self, session_key: str) -> Optional[MessageEvent]:
        return self._pending_messages.pop(session_key, None)

    def _release_session_guard(self, session_key: str, *, guard: Optional[asyncio.Event] = None) -> None:
        current = self._active_sessions.get(session_key)
        if current is None or (guard is not None and current is not guard):
            return
        del self._active_sessions[session_key]

    def _heal_stale_session_lock(self, session_key: str) -> bool:
        if session_key not in self._active_sessions:
            return False
        task = self._session_tasks.get(session_key)
        if task is None or not task.done():
            return False
        logger.warning("[%s] Healing stale session lock for %s", self.name, session_key)
        self._active_sessions.pop(session_key, None)
        self._pending_messages.pop(session_key, None)
        self._session_tasks.pop(session_key, None)
        return True

    def _start_session_processing(self, event: MessageEvent, session_key: str, *,
                                  interrupt_event: Optional[asyncio.Event] = None) -> bool:
        guard = interrupt_event or asyncio.Event()
        self._active_sessions[session_key] = guard
        task = asyncio.create_task(self._process_message_background(event, session_key))
        self._session_tasks[session_key] = task
        self._background_tasks.add(task)
        task.add_done_callback(self._background_tasks.discard)
        task.add_done_callback(self._expected_cancelled_tasks.discard)
        return True

    async def cancel_session_processing(self, session_key: str, *, release_guard: bool = True,
                                        discard_pending: bool = True) -> None:
        """Cancel the session's in-flight processing task (bounded 5 s)."""
        task = self._session_tasks.pop(session_key, None)
        if task is not None and not task.done():
            self._expected_cancelled_tasks.add(task)
            task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=5.0)
            except (asyncio.CancelledError, asyncio.TimeoutError, Exception):
                pass
        if discard_pending:
            self._pending_messages.pop(session_key, None)
        if release_guard:
            self._release_session_guard(session_key)

    def _session_key_of(self, source: SessionSource) -> str:
        store = self._session_store
        return build_session_key(
            source,
            group_sessions_per_user=self.config.extra.get("group_sessions_per_user", True),
            thread_sessions_per_user=self.config.extra.get("thread_sessions_per_user", False),
            profile=store._resolve_profile_for_key(source) if store else None)

    async def _dispatch_active_session_command(self, event: MessageEvent, session_key: str, cmd: str) -> None:
        current = self._active_sessions.get(session_key)
        command_guard = asyncio.Event()
        self._active_sessions[session_key] = command_guard
        try:
            response = await self._message_handler(event)
            if response:
                await self._send_with_retry(chat_id=event.source.chat_id, content=response,
                                            reply_to=_reply_anchor_for_event(event),
                                            metadata=_mark_notify_metadata(_thread_metadata_for_source(event.source)))
            await self.cancel_session_processing(session_key, release_guard=False, discard_pending=False)
        except Exception:
            if self._active_sessions.get(session_key) is command_guard:
                if session_key in self._session_tasks and current is not None:
                    self._active_sessions[session_key] = current
                else:
                    self._release_session_guard(session_key, guard=command_guard)
            raise
        pending = self._pending_messages.pop(session_key, None)
        self._release_session_guard(session_key, guard=command_guard)
        if pending is not None:
            self._start_session_processing(pending, session_key)

    async def handle_message(self, event: MessageEvent) -> None:
        """The inbound injection point: returns at once, the turn runs in
        the background and answers through send()."""
        if not self._message_handler:
            return
        if event.allow_gateway_control:
            coerce_plaintext_gateway_command(event)
        session_key = self._session_key_of(event.source)
        expected = str((event.metadata or {}).get("gateway_session_key") or "").strip()
        if expected and session_key != expected:
            logger.warning("Dropping internally routed event: expected session=%s derived=%s", expected, session_key)
            return
        if session_key in self._active_sessions:
            self._heal_stale_session_lock(session_key)
        if session_key in self._active_sessions:
            cmd = event.get_command()
            if cmd in _BYPASS_COMMANDS:
                try:
                    if cmd in _INTERRUPT_THEN_DISPATCH:
                        await self._dispatch_active_session_command(event, session_key, cmd)
                    else:
                        response = await self._message_handler(event)
                        if response:
                            await self._send_with_retry(
                                chat_id=event.source.chat_id, content=response, reply_to=_reply_anchor_for_event(event),
                                metadata=_mark_notify_metadata(_thread_metadata_for_source(event.source)))
                except Exception as e:
                    logger.error("[%s] Command '/%s' dispatch failed: %s", self.name, cmd, e, exc_info=True)
                return
            if self._busy_session_handler is not None:
                try:
                    if await self._busy_session_handler(event, session_key):
                        return
                except Exception as e:
                    logger.error("[%s] Busy-session handler failed: %s", self.name, e, exc_info=True)
            if event.message_type == MessageType.PHOTO:
                merge_pending_message_event(self._pending_messages, session_key, event)
                return
            merge_pending_message_event(self._pending_messages, session_key, event,
                                        merge_text=event.message_type == MessageType.TEXT)
            return
        self._start_session_processing(event, session_key)

    def _spawn_drain(self, pending: MessageEvent, session_key: str) -> None:
        active = self._active_sessions.get(session_key)
        if active is not None:
            active.clear()
        drain = asyncio.create_task(self._process_message_background(pending, session_key))
        self._session_tasks[session_key] = drain
        self._background_tasks.add(drain)
        drain.add_done_callback(self._background_tasks.discard)

    async def _process_message_background(self, event: MessageEvent, session_key: str) -> None:
        delivery_attempted = False
        delivery_succeeded = False

        def record(result: Any) -> None:
            nonlocal delivery_attempted, delivery_succeeded
            if result is None:
                return
            delivery_attempted = True
            if getattr(result, "success", False):
                delivery_succeeded = True

        interrupt_event = self._active_sessions.get(session_key) or asyncio.Event()
        self._active_sessions[session_key] = interrupt_event
        thread_meta = _thread_metadata_for_source(event.source, _reply_anchor_for_event(event))
        typing_task = None
        if getattr(self.config, "typing_indicator", True):
            typing_task = asyncio.create_task(self._keep_typing(event.source.chat_id, metadata=thread_meta,
                                                                stop_event=interrupt_event))
        try:
            await self._run_processing_hook("on_processing_start", event)
            response = await self._message_handler(event)
            response, _ttl = self._unwrap_ephemeral(response)
            if response and interrupt_event.is_set() and session_key in self._pending_messages:
                logger.info("[%s] Suppressing stale response for interrupted session %s", self.name, session_key)
                response = None
            if response:
                media_files, response = self.extract_media(response)
                media_files = self.filter_media_delivery_paths(media_files)
                images, text = self.extract_images(response)
                text = text.strip()
                notify = _mark_notify_metadata(thread_meta)
                waiter = _dispatch_waiter(event)
                if text and waiter is not None:
                    # 0.21 shape: dispatch_request's caller gets the text.
                    waiter.set_result(text)
                    record(SendResult(success=True))
                elif text:
                    adapter = self._final_delivery_adapter(event.source)
                    result = await adapter._send_with_retry(chat_id=event.source.chat_id, content=text,
                                                            reply_to=_reply_anchor_for_event(event), metadata=notify)
                    record(result)
                if images:
                    try:
                        await self.send_multiple_images(chat_id=event.source.chat_id, images=images, metadata=notify,
                                                        human_delay=0.0)
                    except Exception as e:
                        logger.warning("[%s] Error batching images: %s", self.name, e, exc_info=True)
                from urllib.parse import quote

                image_paths, others = [], []
                for path, voice in media_files:
                    if Path(path).suffix.lower() in _IMAGE_EXTS and not voice:
                        image_paths.append(path)
                    else:
                        others.append((path, voice))
                if image_paths:
                    try:
                        await self.send_multiple_images(chat_id=event.source.chat_id,
                                                        images=[(f"file://{quote(p)}", "") for p in image_paths],
                                                        metadata=notify, human_delay=0.0)
                    except Exception as e:
                        logger.warning("[%s] Error batching images: %s", self.name, e, exc_info=True)
                for path, voice in others:
                    try:
                        ext = Path(path).suffix.lower()
                        if ext in _AUDIO_EXTS:
                            r = await self.send_voice(chat_id=event.source.chat_id, audio_path=path, metadata=notify)
                        elif ext in _VIDEO_EXTS:
                            r = await self.send_video(chat_id=event.source.chat_id, video_path=path, metadata=notify)
                        else:
                            r = await self.send_document(chat_id=event.source.chat_id, file_path=path, metadata=notify)
                        if not r.success:
                            logger.warning("[%s] Failed to send media (%s): %s", self.name, ext, r.error)
                    except Exception as e:
                        logger.warning("[%s] Error sending media: %s", self.name, e)
            processing_ok = delivery_succeeded if delivery_attempted else not bool(response)
            await self._run_processing_hook("on_processing_complete", event,
                                            ProcessingOutcome.SUCCESS if processing_ok else ProcessingOutcome.FAILURE)
            if session_key in self._pending_messages:
                pending = self._pending_messages.pop(session_key)
                await self._stop_typing_refresh(event.source.chat_id, typing_task)
                self._spawn_drain(pending, session_key)
                return
        except asyncio.CancelledError:
            current = asyncio.current_task()
            outcome = ProcessingOutcome.CANCELLED if current in self._expected_cancelled_tasks else ProcessingOutcome.FAILURE
            await self._run_processing_hook("on_processing_complete", event, outcome)
            raise
        except Exception as e:
            await self._run_processing_hook("on_processing_complete", event, ProcessingOutcome.FAILURE)
            logger.error("[%s] Error handling message: %s", self.name, e, exc_info=True)
            try:
                await self.send(chat_id=event.source.chat_id,
                                content=(f"Sorry, I encountered an error ({type(e).__name__}).\n"
                                         f"{str(e)[:300] if str(e) else 'no details available'}\n"
                                         "Try again or use /reset to start a fresh session."),
                                metadata=thread_meta)
            except Exception:
                pass
        finally:
            waiter = _dispatch_waiter(event)
            if waiter is not None:  # no reply (or cancelled, failed): the caller gets ""
                waiter.set_result("")
            await self._stop_typing_refresh(event.source.chat_id, typing_task)
            late = self._pending_messages.pop(session_key, None)
            current = asyncio.current_task()
            if late is not None:
                existing = self._session_tasks.get(session_key)
                if existing is not None and existing is not current:
                    self._pending_messages[session_key] = late
                else:
                    self._spawn_drain(late, session_key)
            elif current is not None and self._session_tasks.get(session_key) is current:
                self._release_session_guard(session_key, guard=interrupt_event)
                if session_key not in self._active_sessions:
                    self._session_tasks.pop(session_key, None)

    async def cancel_background_tasks(self) -> None:
        """Cancel every in-flight processing task (gateway shutdown), each
        awaited at most 5 s, until no new one appears."""
        for _ in range(5):
            tasks = [t for t in self._background_tasks if not t.done()]
            if not tasks:
                break
            for t in tasks:
                self._expected_cancelled_tasks.add(t)
                t.cancel()
            try:
                await asyncio.wait_for(asyncio.gather(*(asyncio.shield(t) for t in tasks), return_exceptions=True),
                                       timeout=5.0)
            except asyncio.TimeoutError:
                break
        self._background_tasks.clear()
        self._expected_cancelled_tasks.clear()
        self._session_tasks.clear()
        self._pending_messages.clear()
        self._active_sessions.clear()


# -- the newer API shape (Hermes 0.21+) ------------------------------------------
#
# The Hermes 0.21 source was not available to this stand-in (the fork it
# follows is 0.20.1); what follows is written from the digest of 0.21's
# plugin API (HERMES.md): BasePlatformAdapter gains
# ``async request_session_interrupt(source, *, interrupt_reason=…) -> bool``,
# which derives the session key itself (profile-aware) and interrupts the
# running turn, and ``async dispatch_request(event) -> str``, which returns
# the turn's final text instead of sending it (the later bundled a2a
# plugin's tests fake the pair the same way). ``use_api_shape("0.21")`` adds
# both to BasePlatformAdapter, ``use_api_shape("0.20.1")`` takes them away
# again (the default).

API_SHAPES = ("0.20.1", "0.21")

#: dispatch_request's waiting callers, by id of the event (0.21 shape; the
#: caller holds the event while it waits).
_DISPATCH_WAITERS: Dict[int, asyncio.Future] = {}


def _dispatch_waiter(event: MessageEvent) -> Optional[asyncio.Future]:
    """The pending dispatch_request future of event, taken, or None."""
    fut = _DISPATCH_WAITERS.pop(id(event), None)
    return fut if fut is not None and not fut.done() else None


async def _dispatch_request(self: BasePlatformAdapter, event: MessageEvent) -> str:
    """HERMES.md: ``async dispatch_request(event) -> str``, "a request/response
    path that returns the final text". Written from that line: the event
    goes the way handle_message sends it (session guard, busy handling,
    processing hooks, the gateway's handler), and the final text the turn
    would have sent as its reply is returned instead ("" when the turn ends
    without one: no reply, cancelled, failed). Progress and file sends go
    through the adapter as before."""
    fut = asyncio.get_running_loop().create_future()
    _DISPATCH_WAITERS[id(event)] = fut
    try:
        await self.handle_message(event)
        return await fut
    finally:
        _DISPATCH_WAITERS.pop(id(event), None)


async def _request_session_interrupt(self: BasePlatformAdapter, source: SessionSource, *,
                                     interrupt_reason: str = "user_interrupt", **_: Any) -> bool:
    key = self._session_key_of(source)
    if key not in self._active_sessions:
        return False
    logger.info("[%s] Interrupting session %s: %s", self.name, key, interrupt_reason)
    await self.interrupt_session_activity(key, source.chat_id)
    return True


def _generate_session_key(self: Any, source: SessionSource) -> str:
    """SessionStore._generate_session_key of the newer source (quoted, with
    GatewayRunner._session_key_for_source that delegates to it, from
    gateway/session.py and gateway/run.py at 863e313 in a reading note of
    it): build_session_key with the store's settings and
    _resolve_profile_for_key(source) — the key the gateway routes by."""
    config = getattr(self, "config", None)
    return build_session_key(source, group_sessions_per_user=getattr(config, "group_sessions_per_user", True),
                             thread_sessions_per_user=getattr(config, "thread_sessions_per_user", False),
                             profile=self._resolve_profile_for_key(source))


def use_api_shape(shape: str) -> None:
    """Present the 0.20.1 or the 0.21 API shape (request_session_interrupt,
    dispatch_request)."""
    if shape not in API_SHAPES:
        raise ValueError(f"unknown API shape {shape!r}; one of {API_SHAPES}")
    if shape == "0.21":
        BasePlatformAdapter.request_session_interrupt = _request_session_interrupt  # type: ignore[attr-defined]
        BasePlatformAdapter.dispatch_request = _dispatch_request  # type: ignore[attr-defined]
        SessionStore._generate_session_key = _generate_session_key  # type: ignore[attr-defined]
        return
    for name in ("request_session_interrupt", "dispatch_request"):
        if hasattr(BasePlatformAdapter, name):
            delattr(BasePlatformAdapter, name)
    if hasattr(SessionStore, "_generate_session_key"):
        del SessionStore._generate_session_key  # type: ignore[attr-defined]
