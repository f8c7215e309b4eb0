"""The fake bundled plugin's client tools: the real one's names in the
real one's toolset, doing nothing."""

import json

NAMES = ("a2a_discover", "a2a_call", "a2a_list", "a2a_history", "a2a_orchestrate")


def register_tools(ctx):
    for name in NAMES:
        ctx.register_tool(name=name, toolset="a2a",
                          schema={"name": name, "description": "bundled fake", "parameters": {"type": "object"}},
                          handler=lambda args, **kw: json.dumps({"error": "the bundled fake does nothing"}))
