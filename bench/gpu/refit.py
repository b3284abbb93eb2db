#!/usr/bin/env python3
"""The model's equations re-evaluated on timed sweeps, to try a refit without
rebuilding stencilc.

Runs `stencilc explain --json` once per timed schedule of the logs (as
`sweep_check.py` does, with ptxas registers), then recombines each stencil
kernel's per-resource times (`cost.times`) under the current equations
(`--variant current`, which reproduces explain's figures) or under the
register-limited rounds of bench/gpu/MODEL.md ("the blur's vector runs
modelled"): `⌈loaded words / (registers − 8 − points)⌉` rounds, the DRAM
ceiling `--eta`, and the latency paid over whole waves. Prints the log-RMS
error and, per log and program, the measured time of the schedule the
variant ranks fastest against the fastest measured.

`--rerank K` ranks as the heuristic could with ptxas run on only a few
candidates: today's equations (on ptxas's registers, as explain gives them)
keep their K fastest schedules of each program, and the variant picks among
those. K = 1 is today's pick.

    python3 bench/gpu/refit.py --variant registers \\
        bench/gpu/h200/sweep.log:h200 bench/gpu/h100/vectors/vectors.log:h100 \\
        bench/gpu/h100/refit/picks.log:h100

Needs target/release/stencilc and ptxas (see MODEL.md). `--cache FILE`
keeps the explain reports between runs.
"""
import argparse
import concurrent.futures
import json
import math
import os
import statistics
import subprocess

import sweep_check

# The constants of src/model/mod.rs the variants recombine (keep in step).
STREAM_EFFICIENCY = 0.88
EXPOSED_LATENCY_NS = 450.0
ROWS_PER_ROUND = 8
L2_ROUND_NS = 282.0
ADDRESS_REGISTERS = 8


def rows_of(logs):
    rows = []
    for spec in logs:
        path, device = spec.rsplit(":", 1)
        for line in open(path):
            m = sweep_check.LINE.match(line)
            if m and m.group(1) in sweep_check.ARGS:
                prog, block, tile, vector, shm, ms = m.groups()
                rows.append(dict(log=path, device=device, prog=prog, block=block, tile=tile,
                                 vector=vector, shm=shm, ms=float(ms)))
    return rows


def explain_all(stencilc, rows, cache):
    known = json.load(open(cache)) if cache and os.path.exists(cache) else {}

    def one(row):
        key = json.dumps([row[k] for k in ("device", "prog", "block", "tile", "vector", "shm")])
        if key not in known:
            known[key] = sweep_check.explain(stencilc, row["device"], dict(row), full=True)
        row["report"] = known[key]
        return row

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(one, rows))
    # The variants need ptxas's registers: a report without them is refused.
    for key, report in known.items():
        error = (report.get("ptxas") or {}).get("error")
        if error or not all(k["cost"]["occupancy"]["registers_from_ptxas"] for k in report["kernels"]):
            raise SystemExit(f"refit.py: no ptxas registers for {key}: {error or 'see explain'}")
    if cache:
        json.dump(known, open(cache, "w"))
    return rows


def kernel_seconds(kernel, args):
    """One launch of a stencil kernel under the variant."""
    c = kernel["cost"]
    t = c["times"]
    points = math.prod(kernel["points_per_thread"])
    rows = c["rows_per_thread"]
    by_rows = max(1, math.ceil(rows / ROWS_PER_ROUND)) if points > 1 else 1
    tile_rounds = c["memory_rounds"] - by_rows + 1
    run_rounds = by_rows
    eta, latency_tail = STREAM_EFFICIENCY, False
    if args.variant == "registers":
        eta, latency_tail = args.eta, True
        if points > 1:
            free = c["occupancy"]["registers"] - ADDRESS_REGISTERS - points
            run_rounds = max(by_rows, math.ceil(c["loaded_words_per_thread"] / max(1, free)))
    lifetime = (args.latency_ns * run_rounds + (tile_rounds - 1) * L2_ROUND_NS) * 1e-9
    waves = c["waves"]
    tail = math.ceil(waves) / waves if waves > 1 else 1.0
    latency = waves * lifetime * (tail if latency_tail else 1.0) if c["points"] else 0.0
    dram = t["dram"] * STREAM_EFFICIENCY / eta
    busiest = max(dram, t["l2"], t["l1"], t["issue"], t["fp64"]) * tail
    return t["launch"] + busiest + latency


def predicted_ms(row, args):
    report = row["report"]
    total = report["iteration_seconds"]
    for k in report["kernels"]:
        if k["role"]["kind"] == "stencil":
            total += (kernel_seconds(k, args) - k["cost"]["time"]) * k["launches_per_iteration"]
    return total * 1e3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("logs", nargs="+", help="LOG:DEVICE (h100, h200)")
    parser.add_argument("--variant", choices=["current", "registers"], default="current")
    parser.add_argument("--eta", type=float, default=1.0, help="DRAM ceiling (registers)")
    parser.add_argument("--latency-ns", type=float, default=EXPOSED_LATENCY_NS)
    parser.add_argument("--stencilc", default=str(sweep_check.ROOT / "target/release/stencilc"))
    parser.add_argument("--cache")
    parser.add_argument("--rerank", type=int, metavar="K",
                        help="the variant picks among the K schedules today's equations rank "
                             "fastest (the heuristic with ptxas run on K candidates)")
    parser.add_argument("--check", action="store_true",
                        help="fail unless `--variant current` reproduces every stencil kernel's "
                             "time as explain gives it, and `--variant registers` (η = 1) its "
                             "register_bound_time (the constants above in step with "
                             "src/model/mod.rs)")
    args = parser.parse_args()
    rows = explain_all(args.stencilc, rows_of(args.logs), args.cache)
    if args.check:
        args.variant = "current"
        # explain's `register_bound_time` is the registers variant at η = 1
        # and today's latency (model::register_bound_time, `--ptxas-rank`).
        registers = argparse.Namespace(variant="registers", eta=1.0,
                                       latency_ns=EXPOSED_LATENCY_NS)
        for row in rows:
            for k in row["report"]["kernels"]:
                if k["role"]["kind"] == "stencil":
                    for variant, theirs in [(args, k["cost"]["time"]),
                                            (registers, k["register_bound_time"])]:
                        ours = kernel_seconds(k, variant)
                        if abs(ours - theirs) > 1e-9 * theirs:
                            raise SystemExit(
                                f"refit.py: {row['prog']} {row['block']} {k['name']} "
                                f"({variant.variant}): {ours:.9g} s here, {theirs:.9g} s from "
                                "explain: update the constants or equations of refit.py to "
                                "src/model/mod.rs's")
    if args.rerank is not None and args.rerank < 1:
        raise SystemExit("refit.py: --rerank K needs K of 1 or more")
    current = argparse.Namespace(**{**vars(args), "variant": "current"})
    errors, groups = [], {}
    for row in rows:
        row["predicted_ms"] = predicted_ms(row, args)
        row["current_ms"] = predicted_ms(row, current)
        errors.append(math.log(row["ms"] / row["predicted_ms"]))
        groups.setdefault((row["log"], row["prog"]), []).append(row)
    print(f"{args.variant}: log-RMS error over {len(rows)} schedules "
          f"{math.sqrt(sum(e * e for e in errors) / len(errors)):.3f}")
    ratios = []
    for (log, prog), group in groups.items():
        if args.rerank:
            group = sorted(group, key=lambda r: r["current_ms"])[:args.rerank]
        ranked = min(group, key=lambda r: r["predicted_ms"])
        fastest = min(r["ms"] for r in groups[(log, prog)])
        ratios.append(ranked["ms"] / fastest)
        print(f"  {log} {prog:9} model's fastest: block {ranked['block']} tile {ranked['tile']} "
              f"vector {ranked['vector'] or '1'} shm {ranked['shm'] or '-'}: "
              f"{ranked['ms'] / fastest:.2f}x the fastest measured")
    among = f" among today's {args.rerank} fastest" if args.rerank else ""
    print(f"  picks{among}: mean {statistics.mean(ratios):.3f}x, worst {max(ratios):.2f}x")


if __name__ == "__main__":
    main()
