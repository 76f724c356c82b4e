"""The ``fcenv`` command (also ``python -m fcenv``).

    fcenv evaluate --data QUESTIONS --results RESULTS --out VERDICTS [--answers A] [--compat bfcl]
    fcenv data bfcl [--dest DIR] [--version V] [--wheel FILE]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fcenv.data import DatasetError


def _evaluate(args: argparse.Namespace) -> int:
    from fcenv.data import load_tasks
    from fcenv.episode import EpisodeSettings
    from fcenv.evaluate import accuracy_table, evaluate, read_results, write_verdicts
    from fcenv.rewards import get_reward_fn

    tasks = load_tasks(args.data, answers=args.answers)
    by_id = {t.id: t for t in tasks}
    lines = read_results(Path(args.results), by_id)
    # --compat bfcl: BFCL's own decoder per category. Otherwise the lenient "auto" decoder,
    # which also reads JSON and <tool_call> outputs, unless --handler names one.
    handler = args.handler if args.handler else (None if args.compat == "bfcl" else "auto")
    settings = EpisodeSettings(handler=handler)
    verdicts = write_verdicts(Path(args.out), evaluate(tasks, lines, settings, get_reward_fn(args.reward)))
    print(accuracy_table(verdicts, by_id))
    print(f"\n{len(verdicts)} verdicts written to {args.out}")
    return 0


def _data(args: argparse.Namespace) -> int:
    from fcenv.bfcl_data import BFCL_VERSION, DEFAULT_DIR, fetch_bfcl

    if args.source != "bfcl":
        raise SystemExit(f"unknown data source {args.source!r}; only 'bfcl' is known")
    dest = Path(args.dest) if args.dest else DEFAULT_DIR
    files = fetch_bfcl(dest, args.version or BFCL_VERSION, Path(args.wheel) if args.wheel else None)
    print(f"wrote {len(files)} files of bfcl-eval=={args.version or BFCL_VERSION} to {dest}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fcenv", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    ev = commands.add_parser("evaluate", help="score a BFCL result file")
    ev.add_argument("--data", required=True, help="BFCL question file (or a prior-format JSON file)")
    ev.add_argument("--results", required=True, help="JSON Lines of {\"id\", \"result\"}")
    ev.add_argument("--out", required=True, help="where to write one verdict per result line")
    ev.add_argument("--answers", help="possible-answer file, if not at possible_answer/<name> beside --data")
    ev.add_argument("--compat", choices=["bfcl"], help="decode exactly as BFCL does, for BFCL's verdicts")
    ev.add_argument("--handler", help="decoder to use for every entry (see handlers.available_handlers())")
    ev.add_argument("--reward", choices=["bfcl", "shaped"], default="bfcl", help="reward written with each verdict")
    ev.set_defaults(run=_evaluate)

    data = commands.add_parser("data", help="fetch datasets")
    data.add_argument("source", choices=["bfcl"], help="'bfcl': BFCL's data from the bfcl-eval package")
    data.add_argument("--dest", help="target folder (default: datasets/bfcl)")
    data.add_argument("--version", help="bfcl-eval version")
    data.add_argument("--wheel", help="use this bfcl-eval wheel instead of downloading one")
    data.set_defaults(run=_data)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except DatasetError as exc:
        print(f"fcenv {args.command}: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"fcenv {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
