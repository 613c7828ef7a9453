"""``vspec explain SPEC``: say why each task of a spec ended where it did, as text or JSON
(:mod:`vspec.explain`). Imports the explainer and the harness when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vspec.cli.plugin_dirs import load_plugins, plugins_dir_option
from vspec.cli.status import EXIT_FAILED, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]


def add_cli(commands: Commands) -> None:
    explain = commands.add_parser("explain", help="say why each task of a spec ended where it did")
    explain.add_argument("spec", type=Path, metavar="SPEC", help="a spec file")
    explain.add_argument("--task", metavar="NS/NAME", help="explain this task only")
    explain.add_argument("--job", metavar="NS/NAME", help="explain the tasks of this job")
    explain.add_argument("--cycle", type=int, metavar="N", help="only cycle N (0-based)")
    explain.add_argument(
        "--format", choices=("text", "json"), default="text", help="text (default) or json"
    )
    explain.add_argument("-k", dest="keyword", metavar="EXPR", help="select specs of the file")
    explain.add_argument("--seed", type=int, metavar="N", help="override the spec's seed")
    plugins_dir_option(explain)
    explain.set_defaults(handler=_explain)


def _explain(args: argparse.Namespace) -> int:
    import dataclasses
    import json

    from vspec.errors import SpecError, VspecError
    from vspec.explain.run import Selection, explain_spec
    from vspec.explain.text import render
    from vspec.harness.keyword import KeywordError, compile_keyword
    from vspec.harness.runner import load_specs, spec_keywords

    if not load_plugins(args):
        return EXIT_USAGE
    if args.spec.is_dir() or not args.spec.exists():
        print(f"vspec: error: {args.spec}: not a spec file", file=sys.stderr)
        return EXIT_USAGE
    try:
        select = compile_keyword(args.keyword or "")
    except KeywordError as exc:
        print(f"vspec: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problems: list[str] = []
    specs, errors = load_specs(args.spec, named=True, problems=problems, seed=args.seed)
    for error in errors:
        print("\n".join(error.messages), file=sys.stderr)
    for problem in problems:
        print(f"vspec: error: {problem}", file=sys.stderr)
    if errors or problems:
        return EXIT_USAGE
    selection = Selection(task=args.task, job=args.job, cycle=args.cycle)
    documents = []
    code = EXIT_OK
    for spec in specs:
        if not select(spec_keywords(spec, args.spec.resolve().parent)):
            continue
        try:
            explanation = explain_spec(spec, selection, seed=args.seed)
        except VspecError as exc:
            where = "" if exc.location is not None else f"{spec.location}: "
            print(f"vspec: error: {where}{exc}", file=sys.stderr)
            code = EXIT_USAGE if isinstance(exc, SpecError) else EXIT_FAILED
            continue
        if explanation.error is not None:
            print(f"vspec: error: {spec.location}: {explanation.error}", file=sys.stderr)
            code = EXIT_FAILED
        if args.format == "json":
            documents.append(dataclasses.asdict(explanation))
        else:
            print(render(explanation))
    if args.format == "json":
        print(json.dumps(documents, indent=2))
    return code
