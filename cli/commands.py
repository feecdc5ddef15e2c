"""The ``engram`` subcommands beyond run/migrate; each module registers its own."""

from __future__ import annotations

import argparse


def register_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add every domain subcommand (route, recall, import, export, forget, services, model) to the parser."""
    from cli import memory, model, route, services

    route.register(commands)
    memory.register(commands)
    services.register(commands)
    model.register(commands)
