"""``engram backup PATH`` and ``engram restore PATH``: everything a person would lose, in one file, and back."""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.arguments import CommandError
from services.settings import Settings


def cmd_backup(settings: Settings, args: argparse.Namespace) -> int:
    from cli.memory import connected
    from services.backup import BackupError, write_backup

    path = Path(args.path)
    if path.exists() and not args.force and not path.is_dir():
        raise CommandError(f"{path} exists; give a new name, or --force to replace it")
    with connected(settings) as conn:
        if conn.redis is None:
            raise CommandError("no Redis to back up (REDIS_URL is unset and no embedded server started)")
        try:
            summary = write_backup(conn.engine, conn.redis, conn.settings.database_url or "", path)
        except BackupError as exc:
            raise CommandError(str(exc)) from None
    print(f"backed up {summary.exchanges} exchanges of {summary.users} user(s) and {summary.redis_keys} Redis keys "
          f"to {summary.path} ({summary.bytes / 2**20:.1f} MiB in {summary.seconds:.1f} s)")
    return 0


def cmd_restore(settings: Settings, args: argparse.Namespace) -> int:
    from services.backup import BackupError, restore_backup

    try:
        manifest = restore_backup(Path(args.path), settings)
    except BackupError as exc:
        raise CommandError(str(exc)) from None
    where = settings.data_dir if settings.uses_embedded else "DATABASE_URL and REDIS_URL"
    print(f"restored the backup of {manifest['created_at']} ({manifest['exchanges']} exchanges, "
          f"{manifest['users']} user(s)) into {where}; start it with `engram run`")
    return 0


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``backup`` and ``restore`` to the ``engram`` parser."""
    p = commands.add_parser("backup", help="write a consistent backup (database and kept Redis state) to one file, "
                                           "while Engram serves")
    p.add_argument("path", help="the backup file to write (written under a temporary name, renamed when whole)")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.set_defaults(handler=cmd_backup)
    p = commands.add_parser("restore", help="restore a backup into an empty data directory (ENGRAM_DATA_DIR) or into "
                                            "the empty servers of DATABASE_URL / REDIS_URL")
    p.add_argument("path", help="the backup file")
    p.set_defaults(handler=cmd_restore)
