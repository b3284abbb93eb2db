#!/usr/bin/env python3
"""Predicted (stencilc explain --device h100) against measured (bench-gpu on an
H100) for every case of a bench-gpu results.json; prints a Markdown table.

    python3 bench/gpu/model_table.py [STENCILC] [RESULTS.json]

STENCILC defaults to target/release/stencilc, RESULTS.json to
bench/gpu/h100/results.json. f64 variants are made as bench-gpu makes them:
`float` becomes `double`, f-suffixed math functions and literals lose the `f`.
The Thorin "tables" variants place coefficient tables in shared or constant
memory, which `explain` has no flag for; they are left out.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

MATH = ["sqrtf", "fabsf", "expf", "logf", "powf", "sinf", "cosf", "tanf", "fminf",
        "fmaxf", "floorf", "ceilf"]


def to_double(text):
    text = re.sub(r"\bfloat\b", "double", text)
    for f in MATH:
        text = re.sub(r"\b%s\b" % f, f[:-1], text)
    return re.sub(r"(?<![\w.])(\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)[fF]\b",
                  r"\1", text)


def main():
    stencilc = sys.argv[1] if len(sys.argv) > 1 else "target/release/stencilc"
    results = sys.argv[2] if len(sys.argv) > 2 else "bench/gpu/h100/results.json"
    cases = json.load(open(results))["cases"]
    rows = []
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for entry in cases:
            case, result = entry["case"], entry["result"]
            label = case["schedule_label"]
            if result is None or label in ("thorin-tables", "thorin-tiles-tables"):
                continue
            path = os.path.join("bench/programs", os.path.basename(case["path"]))
            text = open(path).read()
            if case["precision"] == "F64":
                text = to_double(text)
            program = os.path.join(tmp, "%s_%s.sdsl" % (case["name"], case["precision"]))
            with open(program, "w") as f:
                f.write(text)
            args = [stencilc, "explain", program, "--device", "h100", "--json"]
            for name, value in case["params"]:
                shown = str(int(value)) if float(value).is_integer() else repr(value)
                args += ["--set", "%s=%s" % (name, shown)]
            if label in ("shm-none", "thorin-no-shm"):
                args += ["--shm", "none"]
            out = subprocess.run(args, capture_output=True, text=True)
            report = json.loads(out.stdout)
            if "error" in report:
                rows.append("| %s | error: %s |" % (case["label"], report["error"]))
                continue
            predicted = report["sweep_seconds"] * 1e3
            measured = result["stencilc_ms"]
            ratio = predicted / measured
            ratios.append(ratio)
            bounds = ", ".join(sorted({k["cost"]["bound"] for k in report["kernels"]
                                       if k["role"]["kind"] == "stencil"}))
            rows.append("| %s | %.3f | %.3f | %.2f | %.0f %% | %.0f %% | %s |" % (
                case["label"], measured, predicted, ratio,
                100 * result["fraction_of_copy"], 100 * report["fraction_of_copy"], bounds))
    print("| case | measured ms | predicted ms | predicted / measured | measured of copy "
          "| predicted of copy | predicted bound |")
    print("|---|---:|---:|---:|---:|---:|---|")
    print("\n".join(rows))
    errors = [abs(r - 1) for r in ratios]
    print()
    print("%d cases; predicted / measured from %.2f to %.2f; median error %.0f %%, "
          "%d of %d within 15 %%." % (len(ratios), min(ratios), max(ratios),
                                       100 * statistics.median(errors),
                                       sum(e <= 0.15 for e in errors), len(ratios)))


if __name__ == "__main__":
    main()
