"""A Hermes process of the stand-in, for the tests that need one of their
own (one binary per HERMES_HOME; the official SDK clients):

    standin_main.py gateway          run the gateway with the scripted model
                                     until stdin closes; print {"endpoints": […]}
    standin_main.py tool NAME ARGS   be a CLI process: discover plugins, call
                                     tool NAME with ARGS (JSON) as the model
                                     would, print {"result": …, "children": […]}

HERMES_HOME comes from the environment.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "standin"))
sys.path.insert(0, HERE)

import fakemodel  # noqa: E402
import run_agent  # noqa: E402


def children(name: str = "a2a-plugin") -> list[int]:
    """This process's child processes called name."""
    out = []
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and comm == name[:15]:
            out.append(int(pid))
    return out


async def gateway() -> int:
    from gateway.config import Platform
    from gateway.run import GatewayRunner
    from support import LongJob, register_test_tools

    run_agent.OpenAI = fakemodel.FakeOpenAI
    register_test_tools(LongJob())
    runner = GatewayRunner()
    await runner.start()
    adapter = runner.adapters.get(Platform("a2a"))
    print(json.dumps({"endpoints": adapter.endpoints if adapter else [], "pid": os.getpid(),
                      "error": None if adapter else "the a2a platform did not connect"}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await runner.stop()
    return 0


def tool(name: str, args: str) -> int:
    from gateway.session_context import set_session_vars
    from hermes_cli.plugins import discover_plugins, get_plugin_manager
    from tools.registry import registry

    discover_plugins()
    loaded = get_plugin_manager().plugins().get("a2a-plugin")
    # What Hermes' CLI/TUI binds: a session and its source, no platform
    # or chat (those are the gateway's).
    set_session_vars(session_key="cli-session", session_id="cli-session", source="cli", cron_session="")
    result = registry.dispatch(name, json.loads(args)) if registry.get_entry(name) else None
    print(json.dumps({"result": result, "children": children(),
                      "load_error": loaded.error if loaded else "not discovered"}), flush=True)
    return 0


def main() -> int:
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a hung test process can be asked where it is
    logging.basicConfig(level=os.environ.get("STANDIN_LOG_LEVEL", "WARNING"), stream=sys.stderr)
    if sys.argv[1:2] == ["gateway"]:
        return asyncio.run(gateway())
    if sys.argv[1:2] == ["tool"] and len(sys.argv) == 4:
        return tool(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
