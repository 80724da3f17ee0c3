#!/usr/bin/env python3
"""The GPU benchmark's bookkeeping (experiments/bench/gpu/run.sh), standard library only.

    report.py record --jsonl F --round R --group G --impl I --rc RC --wall S
                     --stdout FILE [--json-file FILE] [--cmd TEXT]
appends one JSON line: the piece's identity, its status (ok, failed, timeout, no-json,
skipped) and its result, read from --json-file (ntk-probe bench --out: an array of rows) or
else from the last line of FILE that parses as a JSON object (ntk-train bench, the PyTorch
scripts with --json).

    report.py md --jsonl F [--header FILE]
prints the markdown report: a summary table (what, ours s, PyTorch s, ratio), the NTK
details (eigenvalues, kappa), every piece's status, and the header (the machine) on top.

    report.py cudnn F [F ...]
prints the cuDNN engine's tables from experiments/bench/gpu/cudnn.sh's cudnn_bench.jsonl
(rows with `side`: ours, ours-nograph, ours-tf32, pytorch): per model, ours against the best
PyTorch row of the same precision (which one won: engine, layout, autotuner) and against
PyTorch's default (eager, NCHW, autotuner off); then every PyTorch row kind. Each figure is
the best over the rounds (and files) given. PyTorch rows written before issue 63 carry no
`cudnn_benchmark` or `layout`: they were autotuner off, NCHW, and are read so.
"""
import argparse
import json
import math
import sys


def last_json_object(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return json.loads(line)
            except ValueError:
                continue
    return None


def read_json_file(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if isinstance(data, list):
        return data[0] if len(data) == 1 else ({"rows": data} if data else None)
    return data


def record(a):
    result = read_json_file(a.json_file) if a.json_file else None
    if result is None:
        result = last_json_object(a.stdout) if a.stdout else None
    if a.rc == -1:
        status = "skipped"
    elif a.rc in (124, 137):
        status = "timeout"
    elif a.rc != 0:
        status = "failed"
    elif result is None:
        status = "no-json"
    else:
        status = "ok"
    rec = {
        "round": a.round, "group": a.group, "impl": a.impl, "status": status, "rc": a.rc,
        "wall_s": a.wall, "cmd": a.cmd, "result": result,
    }
    with open(a.jsonl, "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(f"--- recorded: round {a.round} | {a.group} | {a.impl} | {status} (rc {a.rc}, "
          f"{a.wall:.1f} s wall)", flush=True)


def fmt(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float)):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            return str(v)
        if v == 0:
            return "0"
        if abs(v) >= 1e5 or abs(v) < 1e-3:
            return f"{v:.3e}"
        return f"{v:.{digits}g}"
    return str(v)


def seconds(rec, metric):
    """The seconds of `metric` in a record's result, whichever program wrote it."""
    r = rec.get("result") or {}
    if rec.get("status") != "ok":
        return None
    if metric == "step":
        return r.get("seconds_per_step")
    if metric == "formation":
        return r.get("formation_s", r.get("seconds"))
    if metric == "eigen":
        return r.get("eigvalsh_s", r.get("eigen_seconds"))
    if metric == "cholesky":
        return r.get("cholesky_s")
    return None


def ntk_eigen_label(rec):
    r = rec.get("result") or {}
    if rec["impl"] == "pytorch":
        return "eigvalsh f64 (cuSOLVER)"
    eigen = r.get("eigen")
    return f"ntk-probe eigen={eigen}" if eigen else "ntk-probe eigensolver"


def with_result(recs):
    """Each record with its parsed result (an empty dict where the piece gave none)."""
    return [(r, r.get("result") or {}) for r in recs]


def table(headers, rows):
    """A markdown table: the header line, the rule, one line a row (cells as strings)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def md(a):
    recs = []
    with open(a.jsonl) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    pass
    out = []
    if a.header:
        try:
            with open(a.header) as f:
                out.append(f.read().rstrip() + "\n")
        except OSError:
            pass

    # Summary: every (group, round, metric) with a PyTorch figure, against each of ours.
    groups = []
    for r in recs:
        key = (r["group"], r["round"])
        if key not in groups and not r["group"].endswith("check") \
                and not r["group"].startswith("cross-check"):
            groups.append(key)
    rows = []
    for group, rnd in groups:
        here = [r for r in recs if r["group"] == group and r["round"] == rnd]
        peer = next((r for r in here if r["impl"] == "pytorch"), None)
        ours = [r for r in here if r["impl"] != "pytorch"]
        metrics = [("formation", "NTK formation"), ("eigen", "NTK extreme eigenvalues")] \
            if group.startswith("ntk") else [("step", "training step")]
        for metric, label in metrics:
            p = seconds(peer, metric) if peer else None
            for o in ours or [None]:
                s = seconds(o, metric) if o else None
                ratio = s / p if (s is not None and p) else None
                what = f"{label}, {group}"
                if metric == "eigen":
                    what += f" (ours: {ntk_eigen_label(o) if o else '-'}; PyTorch: eigvalsh f64)"
                impl = o["impl"].replace("ours-", "") if o else "-"
                status = (o["status"] if o else "missing") + " / " + (peer["status"] if peer else "missing")
                rows.append((what, rnd, impl, fmt(s), fmt(p), fmt(ratio, 3), status))
    out.append("## Summary (ours / PyTorch: below 1 means ours is faster)\n")
    out += table(["what", "round", "ours on", "ours s", "PyTorch s", "ours / PyTorch",
                  "status (ours / PyTorch)"], rows)

    ntk = [r for r in recs if r["group"].startswith("ntk") and not r["group"].endswith("check")]
    if ntk:
        out.append("\n## NTK details (f32 kernel, depth 10, width 512, d = 5)\n")
        out += table(
            ["group", "round", "impl", "formation s", "GFLOP/s", "eigen s", "eigen by",
             "Cholesky f64 s", "lambda_min", "lambda_max", "kappa", "status"],
            [[r["group"], r["round"], r["impl"], fmt(seconds(r, "formation")),
              fmt(res.get("gflops_per_s"), 4), fmt(seconds(r, "eigen")), ntk_eigen_label(r),
              fmt(res.get("cholesky_s")), fmt(res.get("lambda_min"), 6),
              fmt(res.get("lambda_max"), 6), fmt(res.get("kappa"), 6), r["status"]]
             for r, res in with_result(ntk)])

    train = [r for r in recs if not r["group"].startswith(("ntk", "cross-check"))]
    if train:
        out.append("\n## Training steps\n")
        out += table(
            ["group", "round", "impl", "model", "backend", "engine", "s / step", "samples / s",
             "GFLOP/s", "status"],
            [[r["group"], r["round"], r["impl"], fmt(res.get("model")),
              fmt(res.get("backend")), fmt(res.get("engine")),
              fmt(seconds(r, "step")), fmt(res.get("samples_per_second"), 5),
              fmt(res.get("gflops"), 4), r["status"]]
             for r, res in with_result(train)])

    cross = [r for r in recs if r["group"].startswith("cross-check")]
    if cross:
        out.append("\n## Same network, same inputs (our saved weights and inputs rebuilt in PyTorch)\n")
        out.append("Ours: `ntk-probe ntk` (the bench's network: weights seed 1, inputs seed 0), the f32 "
                   "kernel on the device, every eigenvalue on the host in f64; `ntk-probe bench "
                   "--eigen extreme` on the same n computes the same kernel (its rows above). PyTorch: "
                   "the f32 kernel from our weights, eigvalsh in f64.\n")
        out += table(
            ["group", "round", "impl", "relative error vs our kernel", "lambda_min",
             "lambda_max", "kappa", "status"],
            [[r["group"], r["round"], r["impl"], fmt(res.get("relative_error_vs_ours")),
              fmt(res.get("lambda_min"), 8), fmt(res.get("lambda_max"), 8),
              fmt(res.get("kappa"), 8), r["status"]]
             for r, res in with_result(cross)])

    checks = [r for r in recs if r["group"].endswith("check") and not r["group"].startswith("cross")]
    if checks:
        out.append("\n## Correctness checks\n")
        for r in checks:
            res = r.get("result") or {}
            detail = ", ".join(f"{k} {fmt(v)}" for k, v in res.items() if k.startswith("relative_error"))
            out.append(f"- {r['group']} ({r['impl']}): {r['status']}" + (f"; {detail}" if detail else ""))

    out.append("\n## Every piece\n")
    out += table(
        ["round", "group", "impl", "status", "rc", "wall s", "command"],
        [[r["round"], r["group"], r["impl"], r["status"], r["rc"], fmt(r.get("wall_s"), 4),
          "`" + (r.get("cmd") or "").replace("|", "\\|") + "`"] for r in recs])
    print("\n".join(out))


def pytorch_kind(r):
    """(precision, engine, layout, autotuner) of a PyTorch row of cudnn_bench.jsonl."""
    return (r.get("precision", "f32"), r.get("engine"), r.get("layout", "nchw"),
            bool(r.get("cudnn_benchmark", False)))


def kind_label(kind):
    _, engine, layout, bench = kind
    return f"{engine}, {layout}, autotuner {'on' if bench else 'off'}"


def cudnn_rows(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def cudnn(a):
    rows = cudnn_rows(a.jsonl)
    ok = [r for r in rows if r.get("seconds_per_step") is not None
          and r.get("status", "ok") == "ok" and r.get("side")]
    ours = {}      # (model, side) -> best s
    torch = {}     # (model, kind) -> [s, ...] over rounds
    for r in ok:
        m, s = r["model"], r["seconds_per_step"]
        if r["side"] == "pytorch":
            torch.setdefault((m, pytorch_kind(r)), []).append(s)
        else:
            ours[(m, r["side"])] = min(ours.get((m, r["side"]), math.inf), s)
    def depth_then_name(m):  # "resnet-110 fixup": by depth, then name
        d = m.split()[0].rsplit("-", 1)[-1]
        return (int(d) if d.isdigit() else 0, m)

    models = sorted({k[0] for k in list(ours) + list(torch)}, key=depth_then_name)

    def best(m, precision, default_only=False):
        """The best PyTorch (s, kind) of `precision` for model m (default: eager, NCHW,
        autotuner off, only)."""
        cands = [(min(v), k) for (mm, k), v in torch.items() if mm == m and k[0] == precision
                 and (not default_only or k[1:] == ("eager", "nchw", False))]
        return min(cands) if cands else (None, None)

    f = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
    q = lambda x, y: "-" if x is None or y is None else f"{x / y:.2f}"  # noqa: E731
    out = ["## Ours against PyTorch (seconds per step; ratios below 1: ours faster)\n",
           "Best PyTorch: the fastest PyTorch row of the same precision (eager or CUDA graph, "
           "NCHW or channels_last, cuDNN's autotuner on or off), named; PyTorch default: eager, "
           "NCHW, autotuner off (PyTorch as it starts).\n"]
    body = []
    for m in models:
        o, n, ot = ours.get((m, "ours")), ours.get((m, "ours-nograph")), ours.get((m, "ours-tf32"))
        b, bk = best(m, "f32")
        d, _ = best(m, "f32", True)
        bt, btk = best(m, "tf32")
        dt, _ = best(m, "tf32", True)
        body.append([m, f(o), f(n), f(b), kind_label(bk) if bk else "-", q(o, b), f(d), q(o, d),
                     f(ot), f(bt), kind_label(btk) if btk else "-", q(ot, bt), f(dt), q(ot, dt)])
    out += table(["model", "ours s", "ours, no graph s", "best PyTorch s", "best PyTorch row",
                  "ours / best", "PyTorch default s", "ours / default", "ours TF32 s",
                  "best PyTorch TF32 s", "best PyTorch TF32 row", "TF32: ours / best",
                  "PyTorch default TF32 s", "TF32: ours / default"], body)
    out.append("\n## Every PyTorch row kind (best of its rounds; every round's figure)\n")
    detail = []
    for (m, k), v in sorted(torch.items(), key=lambda kv: (models.index(kv[0][0]), kv[0][1])):
        detail.append([m, k[0], k[1], k[2], "on" if k[3] else "off", f(min(v)),
                       ", ".join(f(x) for x in v)])
    out += table(["model", "precision", "engine", "layout", "autotuner", "best s", "rounds"], detail)
    bad = [r for r in rows if r.get("side") and r.get("status", "ok") != "ok"
           or r.get("side") and r.get("seconds_per_step") is None and "status" not in r]
    if bad:
        out.append("\nRows without a figure: " + "; ".join(
            f"{r.get('model')} {r.get('side')} {r.get('precision', '')} {r.get('engine', '')} "
            f"{r.get('layout', '')} autotuner {'on' if r.get('cudnn_benchmark') else 'off'}: "
            f"{r.get('status', 'no figure')}" + (f" ({r['error']})" if r.get("error") else "")
            for r in bad))
    print("\n".join(out))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd_name", required=True)
    r = sub.add_parser("record")
    r.add_argument("--jsonl", required=True)
    r.add_argument("--round", type=int, required=True)
    r.add_argument("--group", required=True)
    r.add_argument("--impl", required=True)
    r.add_argument("--rc", type=int, required=True, help="exit status; -1: skipped")
    r.add_argument("--wall", type=float, default=0.0)
    r.add_argument("--stdout")
    r.add_argument("--json-file")
    r.add_argument("--cmd", default="")
    m = sub.add_parser("md")
    m.add_argument("--jsonl", required=True)
    m.add_argument("--header")
    c = sub.add_parser("cudnn")
    c.add_argument("jsonl", nargs="+", help="cudnn.sh's cudnn_bench.jsonl (one or more)")
    a = p.parse_args()
    if a.cmd_name == "record":
        record(a)
    elif a.cmd_name == "cudnn":
        cudnn(a)
    else:
        md(a)


if __name__ == "__main__":
    sys.exit(main())
