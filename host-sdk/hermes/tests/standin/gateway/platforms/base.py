"""Stand-in for gateway.platforms.base: BasePlatformAdapter and the types
of a platform's traffic (see ../../README.md).

The behaviour a platform plugin sees is Hermes': ``handle_message`` keys
the session, refuses a second parallel run (a message for a busy session
goes to the gateway's busy-session handler, or waits as the pending
follow-up), spawns the turn as a background task and returns; the task
runs ``on_processing_start``, the gateway's message handler, sends the
final reply with ``reply_to=event.message_id`` and ``metadata={"notify":
True}`` (files named in the reply as ``MEDIA:<path>`` lines follow, through
``send_document``), then ``on_processing_complete`` with SUCCESS (also when
the model failed: the error is the reply), FAILURE (delivery failed or the
handler raised; an error notice follows, without notify) or CANCELLED (the
task was cancelled through ``cancel_session_processing``), then the pending
follow-up as a new task.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Awaitable, Callable, Dict, List, Optional

from gateway.config import Platform, PlatformConfig
from gateway.session import SessionSource, build_session_key

logger = logging.getLogger(__name__)


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

#: Commands that bypass the active-session guard (Hermes' registry).
_BYPASS_COMMANDS = {"stop", "new", "reset", "approve", "deny", "status", "background", "restart"}


def _mark_notify_metadata(metadata: Optional[dict]) -> dict:
    out = dict(metadata) if metadata else {}
    out["notify"] = True
    return out


def merge_pending_message_event(pending: Dict[str, MessageEvent], session_key: str, event: MessageEvent,
                                *, merge_text: bool = False) -> None:
    """Keep event as the session's pending follow-up (text of consecutive
    text follow-ups joined when merge_text)."""
    existing = pending.get(session_key)
    if (existing is not None and merge_text and existing.message_type == MessageType.TEXT
            and event.message_type == MessageType.TEXT):
        existing.text = f"{existing.text}\n{event.text}"
        return
    pending[session_key] = event


class BasePlatformAdapter(ABC):
    """Base of every platform adapter (see the module doc)."""

    supports_code_blocks: bool = False
    MAX_MESSAGE_LENGTH = 4096

    def __init__(self, config: PlatformConfig, platform: Platform):
        self.config = config
        self.platform = platform
        self._message_handler: Optional[MessageHandler] = None
        self._busy_session_handler: Optional[Callable[[MessageEvent, str], Awaitable[bool]]] = None
        self._running = False
        self._fatal_error_code: Optional[str] = None
        self._fatal_error_message: Optional[str] = None
        self._fatal_error_retryable = True
        self._active_sessions: Dict[str, asyncio.Event] = {}
        self._pending_messages: Dict[str, MessageEvent] = {}
        self._session_tasks: Dict[str, asyncio.Task] = {}
        self._background_tasks: set = set()
        self._expected_cancelled_tasks: set = set()
        self._session_store: Any = None
        self.gateway_runner: Any = None

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
        """True when the platform authenticated its senders itself (the
        gateway's allow-lists then do not apply)."""
        return False

    @property
    def has_fatal_error(self) -> bool:
        return self._fatal_error_message is not None

    @property
    def fatal_error_message(self) -> Optional[str]:
        return self._fatal_error_message

    def _mark_connected(self) -> None:
        self._running = True
        self._fatal_error_code = self._fatal_error_message = None

    def _mark_disconnected(self) -> None:
        self._running = False

    def _set_fatal_error(self, code: str, message: str, *, retryable: bool) -> None:
        self._running = False
        self._fatal_error_code, self._fatal_error_message, self._fatal_error_retryable = code, message, retryable

    def set_message_handler(self, handler: MessageHandler) -> None:
        self._message_handler = handler

    def set_busy_session_handler(self, handler: Optional[Callable[[MessageEvent, str], Awaitable[bool]]]) -> None:
        self._busy_session_handler = handler

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

    async def send_document(self, chat_id: str, file_path: str, caption: Optional[str] = None,
                            file_name: Optional[str] = None, reply_to: Optional[str] = None,
                            metadata: Optional[Dict[str, Any]] = None, **kwargs: Any) -> SendResult:
        """Default: the path as text."""
        return await self.send(chat_id, f"📎 File: {file_path}", reply_to=reply_to, metadata=metadata)

    async def send_image(self, chat_id: str, image_url: str, caption: Optional[str] = None,
                         reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None) -> SendResult:
        """Default: the URL as text."""
        text = f"{caption}\n{image_url}" if caption else image_url
        return await self.send(chat_id=chat_id, content=text, reply_to=reply_to, metadata=metadata)

    async def send_image_file(self, chat_id: str, image_path: str, caption: Optional[str] = None,
                              reply_to: Optional[str] = None, metadata: Optional[Dict[str, Any]] = None,
                              **kwargs: Any) -> SendResult:
        """Default: as a document."""
        return await self.send_document(chat_id, image_path, caption=caption, reply_to=reply_to, metadata=metadata)

    async def send_multiple_images(self, chat_id: str, images: List[tuple], metadata: Optional[Dict[str, Any]] = None,
                                   human_delay: float = 0.0) -> None:
        """Each image on its own: file:// through send_image_file, others
        through send_image."""
        for url, alt in images:
            if url.startswith("file://"):
                await self.send_image_file(chat_id=chat_id, image_path=url[7:], caption=alt or None, metadata=metadata)
            else:
                await self.send_image(chat_id=chat_id, image_url=url, caption=alt or None, metadata=metadata)

    @staticmethod
    def extract_images(content: str) -> tuple[list[tuple[str, str]], str]:
        """Markdown images of a reply, and the reply without them."""
        import re

        images = [(m[2], m[1]) for m in re.finditer(r"!\[([^\]]*)\]\((https?://[^)\s]+)\)", content or "")]
        text = re.sub(r"!\[([^\]]*)\]\((https?://[^)\s]+)\)", "", content or "").strip()
        return images, text

    def toolsets_for_source(self, source: SessionSource) -> Optional[List[str]]:
        """Per-source toolsets replacing the platform's; None: the platform's."""
        return None

    async def on_processing_start(self, event: MessageEvent) -> None:
        """Hook: background processing of event begins."""

    async def on_processing_complete(self, event: MessageEvent, outcome: ProcessingOutcome) -> None:
        """Hook: background processing of event ended with outcome."""

    async def _run_processing_hook(self, hook_name: str, *args: Any) -> None:
        hook = getattr(self, hook_name, None)
        if not callable(hook):
            return
        try:
            await hook(*args)
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
        if chat_topic is not None and not chat_topic.strip():
            chat_topic = None
        return SessionSource(platform=self.platform, chat_id=str(chat_id), chat_name=chat_name, chat_type=chat_type,
                             user_id=str(user_id) if user_id else None, user_name=user_name,
                             thread_id=str(thread_id) if thread_id else None, chat_topic=chat_topic,
                             user_id_alt=user_id_alt, chat_id_alt=chat_id_alt, is_bot=is_bot,
                             scope_id=str(scope_id) if scope_id else None, guild_id=guild_id,
                             parent_chat_id=parent_chat_id, message_id=str(message_id) if message_id else None,
                             role_authorized=role_authorized, auto_thread_created=auto_thread_created,
                             auto_thread_initial_name=auto_thread_initial_name)

    async def _send_with_retry(self, chat_id: str, content: str, reply_to: Optional[str] = None,
                               metadata: Optional[Dict[str, Any]] = None, max_retries: int = 2,
                               base_delay: float = 0.05) -> SendResult:
        """send, retried when the result says retryable."""
        result = await self.send(chat_id, content, reply_to=reply_to, metadata=metadata)
        attempt = 0
        while not result.success and result.retryable and attempt < max_retries:
            attempt += 1
            await asyncio.sleep(result.retry_after or base_delay * attempt)
            result = await self.send(chat_id, content, reply_to=reply_to, metadata=metadata)
        return result

    def _session_key_for(self, source: SessionSource) -> str:
        store = self._session_store
        return build_session_key(
            source,
            group_sessions_per_user=self.config.extra.get("group_sessions_per_user", True),
            thread_sessions_per_user=self.config.extra.get("thread_sessions_per_user", False),
            profile=store._resolve_profile_for_key(source) if store else None)

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
        task = self._session_tasks.get(session_key)
        if session_key not in self._active_sessions or task is None or not task.done():
            return False
        self._active_sessions.pop(session_key, None)
        self._pending_messages.pop(session_key, None)
        self._session_tasks.pop(session_key, None)
        return True

    def _start_session_processing(self, event: MessageEvent, session_key: str) -> bool:
        guard = asyncio.Event()
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

    async def handle_message(self, event: MessageEvent) -> None:
        """The inbound injection point: returns at once, the turn runs in
        the background and answers through send()."""
        if not self._message_handler:
            return
        session_key = self._session_key_for(event.source)
        if session_key in self._active_sessions:
            self._heal_stale_session_lock(session_key)
        if session_key in self._active_sessions:
            cmd = event.get_command()
            if cmd in _BYPASS_COMMANDS:
                try:
                    response = await self._message_handler(event)
                    if response:
                        await self._send_with_retry(event.source.chat_id, response, reply_to=event.message_id,
                                                    metadata=_mark_notify_metadata(None))
                    if cmd in ("stop", "new", "reset"):
                        await self.cancel_session_processing(session_key, release_guard=True, discard_pending=False)
                except Exception as e:
                    logger.error("[%s] Command '/%s' dispatch failed: %s", self.name, cmd, e)
                return
            if self._busy_session_handler is not None:
                try:
                    if await self._busy_session_handler(event, session_key):
                        return
                except Exception as e:
                    logger.error("[%s] Busy-session handler failed: %s", self.name, e)
            merge_pending_message_event(self._pending_messages, session_key, event,
                                        merge_text=event.message_type == MessageType.TEXT)
            return
        self._start_session_processing(event, session_key)

    @staticmethod
    def extract_media(content: str) -> tuple[list[str], str]:
        """MEDIA:<path> lines of a reply, and the reply without them."""
        files, keep = [], []
        for line in (content or "").splitlines():
            if line.strip().startswith("MEDIA:"):
                files.append(line.strip()[len("MEDIA:"):].strip())
            else:
                keep.append(line)
        return files, "\n".join(keep).strip()

    async def _process_message_background(self, event: MessageEvent, session_key: str) -> None:
        delivery_attempted = False
        delivery_succeeded = False
        interrupt_event = self._active_sessions.get(session_key) or asyncio.Event()
        self._active_sessions[session_key] = interrupt_event
        try:
            await self._run_processing_hook("on_processing_start", event)
            response = await self._message_handler(event)
            if response and interrupt_event.is_set() and session_key in self._pending_messages:
                logger.info("[%s] Suppressing stale response for interrupted session %s", self.name, session_key)
                response = None
            if response:
                files, text = self.extract_media(response)
                images, text = self.extract_images(text)
                notify = _mark_notify_metadata(None)
                if text:
                    result = await self._send_with_retry(event.source.chat_id, text, reply_to=event.message_id,
                                                         metadata=notify)
                    delivery_attempted = True
                    delivery_succeeded = bool(result.success)
                if images:
                    await self.send_multiple_images(event.source.chat_id, images, metadata=notify)
                for path in files:
                    r = await self.send_document(event.source.chat_id, path, metadata=notify)
                    if not r.success:
                        logger.warning("[%s] Failed to send media %s: %s", self.name, path, r.error)
            processing_ok = delivery_succeeded if delivery_attempted else not bool(response)
            await self._run_processing_hook(
                "on_processing_complete", event,
                ProcessingOutcome.SUCCESS if processing_ok else ProcessingOutcome.FAILURE)
            if session_key in self._pending_messages:
                pending = self._pending_messages.pop(session_key)
                active = self._active_sessions.get(session_key)
                if active is not None:
                    active.clear()
                drain = asyncio.create_task(self._process_message_background(pending, session_key))
                self._session_tasks[session_key] = drain
                self._background_tasks.add(drain)
                drain.add_done_callback(self._background_tasks.discard)
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
                await self.send(event.source.chat_id,
                                f"Sorry, I encountered an error ({type(e).__name__}).\n{str(e)[:300]}\n"
                                "Try again or use /reset to start a fresh session.")
            except Exception:
                pass
        finally:
            current = asyncio.current_task()
            if self._session_tasks.get(session_key) is current:
                late = self._pending_messages.pop(session_key, None)
                if late is not None:
                    drain = asyncio.create_task(self._process_message_background(late, session_key))
                    self._session_tasks[session_key] = drain
                    self._background_tasks.add(drain)
                    drain.add_done_callback(self._background_tasks.discard)
                else:
                    self._release_session_guard(session_key, guard=interrupt_event)
                    if session_key not in self._active_sessions:
                        self._session_tasks.pop(session_key, None)

    async def cancel_background_tasks(self) -> None:
        """Cancel every in-flight processing task (gateway shutdown)."""
        tasks = [t for t in self._background_tasks if not t.done()]
        for t in tasks:
            self._expected_cancelled_tasks.add(t)
            t.cancel()
        for t in tasks:
            try:
                await asyncio.wait_for(asyncio.shield(t), timeout=5.0)
            except (asyncio.CancelledError, asyncio.TimeoutError, Exception):
                pass
        self._background_tasks.clear()
        self._active_sessions.clear()
        self._pending_messages.clear()
        self._session_tasks.clear()
