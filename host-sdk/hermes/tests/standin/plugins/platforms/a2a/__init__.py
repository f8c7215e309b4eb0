"""A fake of Hermes' bundled a2a-platform for the stand-in: the same tool
names, doing nothing."""

import json


def register(ctx):
    for name in ("a2a_discover", "a2a_call", "a2a_list", "a2a_history", "a2a_orchestrate"):
        ctx.register_tool(name=name, toolset="a2a",
                          schema={"name": name, "description": "bundled fake", "parameters": {"type": "object"}},
                          handler=lambda args, **kw: json.dumps({"error": "the bundled fake does nothing"}))
