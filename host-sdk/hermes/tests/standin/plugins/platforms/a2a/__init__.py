"""A fake of Hermes' bundled a2a-platform for the stand-in: its tools
(tools.py) and an ``a2a`` platform whose adapter never comes up."""


def register(ctx):
    from .tools import register_tools

    register_tools(ctx)
    ctx.register_platform(name="a2a", label="A2A (bundled fake)", adapter_factory=lambda cfg: None,
                          check_fn=lambda: False, install_hint="the stand-in's bundled fake has no adapter")
