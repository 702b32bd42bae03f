# Before and after: tfrecord_lite from two checkouts, measured in the same rounds on one machine,
# to show whether a change made anything slower.
#
#   python benchmarks/compare.py --before PATH [--after PATH] [--python PATH] [--quick] [--rounds N]
#                                [--only WORKLOAD ...] [--tasks TASK ...]
#
# It runs run.py's job (its workloads and tfrecord_lite's measurements, all of them unless --tasks
# chooses) with this checkout's worker.py under one interpreter, once with PYTHONPATH=<before> and
# once with PYTHONPATH=<after> in each round, the two taking turns in a rotating order
# (run.take_turns). The worker reaches tfrecord_lite through its public names only, so both
# checkouts run the code those calls reach in each. Before measuring, and in every report, where
# tfrecord_lite was imported from is checked: a checkout whose import resolves elsewhere (an installed
# copy, say) stops the run. The workloads are generated with the after checkout. The table goes to
# stdout (markdown), everything to benchmarks/results/<time>-compare.json. Nothing here asserts
# a speed: rows where after was slower in every round are listed under the table.
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run
from _rounds import compare

NAMES = ("before", "after")


def checkout(path: str) -> str:
    """`path` resolved, if it is a source tree with tfrecord_lite in it (else exits)."""
    tree = os.path.realpath(path)
    if not os.path.isfile(os.path.join(tree, "tfrecord_lite", "__init__.py")):
        sys.exit(f"{path} is not a checkout: it has no tfrecord_lite/__init__.py")
    return tree


def revision(tree: str) -> dict[str, Any]:
    """The git commit the checkout is at, and whether its tfrecord_lite/ differs from that commit."""

    def git(*args: str) -> str | None:
        proc = subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True, check=False)
        return proc.stdout.strip() if proc.returncode == 0 else None

    status = git("status", "--porcelain", "--", "tfrecord_lite")
    return {"commit": git("rev-parse", "HEAD"), "modified": bool(status) if status is not None else None}


def check_origin(name: str, tree: str, origin: dict[str, Any]) -> None:
    """Exit unless tfrecord_lite, and every module of it, was imported from `tree`."""
    package = os.path.join(tree, "tfrecord_lite") + os.sep
    if not os.path.realpath(origin["file"]).startswith(package):
        sys.exit(f"the {name} worker imported tfrecord_lite from {origin['file']}, not from {package}")
    if origin["elsewhere"]:
        sys.exit(f"the {name} worker imported {', '.join(origin['elsewhere'])} from outside {package}")


def table(summary: dict[tuple[str, str, str], dict[str, Any]], workloads: list[str]) -> list[dict[str, Any]]:
    """One row a measurement: both rates, and after ÷ before (rec/s) of the medians and of each round."""
    rows = []
    for workload in workloads:
        for task in run.TASKS:
            before, after = (summary.get((name, workload, task)) for name in NAMES)
            if before is None or after is None:
                continue
            ratio = compare(after["times"], before["times"])  # before's seconds / after's: after ÷ before rec/s
            rounds = [b / a for a, b in zip(after["times"], before["times"], strict=True)]
            rows.append(
                {
                    "workload": workload,
                    "task": task,
                    "before_records_per_s": before["records_per_s"],
                    "after_records_per_s": after["records_per_s"],
                    "ratio": ratio["median"],
                    "low": ratio["low"],
                    "high": ratio["high"],
                    "rounds": rounds,
                }
            )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| workload | measurement | before rec/s | after rec/s | after ÷ before | spread of after ÷ before |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['workload']} | {run.TASKS[r['task']]} | {run.rate(r['before_records_per_s'])} "
            f"| {run.rate(r['after_records_per_s'])} | {r['ratio']:.3f}× | {r['low']:.3f}–{r['high']:.3f} |"
        )
    slower = [f"{r['workload']} {run.TASKS[r['task']]} ({r['high']:.3f}×)" for r in rows if r["high"] < 1]
    lines += ["", "Slower after in every round: " + ("; ".join(slower) if slower else "none") + "."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description="tfrecord_lite from two checkouts, in the same rounds")
    parser.add_argument("--before", required=True, help="the checkout to compare against (a source tree)")
    parser.add_argument("--after", default=run.ROOT, help="the checkout with the change (default: this one)")
    parser.add_argument(
        "--python",
        default=os.path.join(run.ROOT, ".venvs", "bench", "bin", "python"),
        help="the interpreter both run under (default .venvs/bench/bin/python, where `tasks.py bench` "
        "measures tfrecord_lite)",
    )
    run.add_job_arguments(parser)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--rounds must be at least 1")
    if not os.path.exists(args.python):
        parser.error(f"no interpreter {args.python}: pass --python, or run `python3 tasks.py bench-compare`")
    started = time.monotonic()
    trees = {"before": checkout(args.before), "after": checkout(args.after)}
    runners = {name: ("tfrecord_lite", args.python, run.child_env(tree)) for name, tree in trees.items()}
    for name, (system, python, env) in runners.items():
        check_origin(name, trees[name], run.run_worker(system, python, ["--origin"], env))
        run.log(f"{name}: {trees[name]} ({revision(trees[name])['commit']})")

    entries, job_path = run.prepare_job(args, args.python, runners["after"][2])
    raw = run.take_turns(runners, job_path, args.runs)
    for name, report in raw.items():
        check_origin(name, trees[name], report["tfrecord_lite"])
    summary = run.summarize(raw, {e["name"]: (e["count"], e["bytes"]) for e in entries})
    rows = table(summary, [e["name"] for e in entries])
    text = markdown(rows)
    print(text)

    stamp = run.utc_stamp()
    run.save_results(
        f"{stamp}-compare{'-quick' if args.quick else ''}",
        {
            "command": "python benchmarks/compare.py " + " ".join(sys.argv[1:]),
            "quick": args.quick,
            "runs": args.runs,
            "python": args.python,
            "machine": run.machine(),
            "trees": {
                name: {"path": tree, **revision(tree), "tfrecord_lite": raw[name]["tfrecord_lite"]}
                for name, tree in trees.items()
            },
            "workloads": entries,
            "versions": raw["after"]["versions"],  # of the interpreter's packages: one interpreter runs both
            "raw": raw,
            "rows": rows,
            "slower_every_round": [r for r in rows if r["high"] < 1],
            "wall_seconds": round(time.monotonic() - started),
            "markdown": text,
        },
    )
    run.log(f"compared in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
