"""A minimal Python host on agentplugin_host: it runs one plugin and answers
every inbound message with the sender's words, as the reference host's echo
agent does (``agenthost run --agent echo``). make bench-python measures the A2A
plugin through it beside the Go reference host.

    /usr/bin/python3 host-sdk/python/examples/echo_host.py --plugin bin/plugins/a2a-plugin \\
        --data /tmp/echo-data --config '{"port": 41300}'

It prints ``serving at URL`` for each endpoint once the plugin serves, and
stops the plugin (Drain, then Shutdown) on SIGINT or SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from agentplugin_host import Manager, Options, Transport, pb  # noqa: E402


def sender_text(req: pb.HandleMessageRequest) -> str:
    """The sender's own words: the text parts of the original message (the
    flattened text is framed as untrusted input by the A2A plugin)."""
    texts = [p.text for p in req.parts if p.WhichOneof("content") == "text"]
    return "\n".join(texts) if req.parts else req.text


class EchoHost:
    """A host whose agent answers each turn with the sender's words."""

    def __init__(self) -> None:
        self.platform = None

    async def handle_message(self, req: pb.HandleMessageRequest) -> pb.HandleMessageResponse:
        asyncio.ensure_future(self._answer(req))
        return pb.HandleMessageResponse(turn_id=req.task_id)

    async def _answer(self, req: pb.HandleMessageRequest) -> None:
        try:
            await self.platform.send(pb.SendRequest(
                platform=req.platform, chat_id=req.chat_id, task_id=req.task_id,
                kind=pb.SEND_KIND_FINAL, text=sender_text(req), ends_turn=True))
        except Exception as e:  # the turn stays open; end it as failed
            logging.getLogger("echo").warning("send failed: %s", e)
            await self.platform.processing_complete(pb.ProcessingCompleteRequest(
                platform=req.platform, chat_id=req.chat_id, task_id=req.task_id,
                outcome=pb.OUTCOME_FAILURE, error=str(e)))

    async def cancel_turn(self, req: pb.CancelTurnRequest) -> pb.CancelTurnResponse:
        return pb.CancelTurnResponse(cancelled=False)  # echo turns end at once

    async def list_tools(self) -> list:
        return []


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plugin", required=True, help="the plugin executable")
    ap.add_argument("--data", default=None, help="data directory root (default: a temporary one)")
    ap.add_argument("--config", default="{}", help="the plugin's configuration section, as JSON")
    ap.add_argument("--transport", choices=[t.value for t in Transport], default=Transport.AUTO_MTLS.value)
    ap.add_argument("--log-level", default="warn")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    host = EchoHost()
    m = Manager(Options(paths=[args.plugin], host=host, data_dir=args.data, env_allow=["A2A_*"],
                        config={"a2a": json.loads(args.config)}, transport=Transport(args.transport),
                        log_level=args.log_level))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await m.start()
    plugin = m.plugins()[0]
    host.platform = plugin.platform()
    for url in plugin.endpoints:
        print(f"{plugin.name}: serving at {url}", flush=True)
    await stop.wait()
    await m.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
