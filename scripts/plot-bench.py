#!/usr/bin/env python3
"""Plots `ferry bench latency|throughput --json` results as an SVG (or PNG).

Usage: scripts/plot-bench.py RESULT.json [MORE.json ...] -o FILE.svg [--title TEXT]

Each input holds the JSON lines `ferry bench ... --json` prints (one per
size; latency and throughput lines may be mixed, e.g. two outputs
concatenated). The figure has one panel per latency size: every
transport's one-way latency percentiles (p50, p90, p99, p99.9, max) on a
log axis, the bars of each point the range over the repeats; and one panel
per throughput size: a bar per transport (messages per second, log axis),
its whisker the range over the repeats. Needs matplotlib (Debian:
python3-matplotlib). Bad input: one sentence on stderr, exit 2.
"""

import argparse
import json
import sys

PERCENTILES = [("p50_ns", "p50"), ("p90_ns", "p90"), ("p99_ns", "p99"),
               ("p999_ns", "p99.9"), ("max_ns", "max")]


def fail(message):
    print(f"plot-bench.py: {message}", file=sys.stderr)
    sys.exit(2)


def kind_of(line):
    if "kind" in line:
        return line["kind"]
    return "latency" if "rounds" in line else "throughput"


def size_label(size):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= (1 << shift) and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def read_lines(paths):
    lines = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            fail(f"cannot read {path}: {e.strerror}")
        for number, raw in enumerate(text.splitlines(), 1):
            raw = raw.strip()
            if not raw:
                continue
            try:
                line = json.loads(raw)
            except json.JSONDecodeError:
                fail(f"{path}:{number} is not a JSON line of `ferry bench --json`")
            if not isinstance(line, dict) or "size" not in line or "results" not in line:
                fail(f"{path}:{number} has no size and results; is it `ferry bench --json` output?")
            lines.append(line)
    if not lines:
        fail("no results in " + ", ".join(paths))
    return lines


def colors_for(lines):
    """One colour per transport, the same in every panel."""
    colors = {}
    for line in lines:
        for r in line["results"]:
            colors.setdefault(r["transport"], f"C{len(colors) % 10}")
    return colors


def plot_latency(ax, line, colors):
    positions = range(len(PERCENTILES))
    for r in line["results"]:
        medians = [r[key] for key, _ in PERCENTILES]
        spread = r.get("spread", {})
        lows = [m - spread.get(key, [m, m, m])[0] for m, (key, _) in zip(medians, PERCENTILES)]
        highs = [spread.get(key, [m, m, m])[2] - m for m, (key, _) in zip(medians, PERCENTILES)]
        style = "--" if r["transport"] == "cacheline" else "-"
        ax.errorbar(positions, medians, yerr=[lows, highs], marker="o", linestyle=style,
                    capsize=3, label=r["transport"], color=colors[r["transport"]])
    ax.set_yscale("log")
    ax.set_xticks(list(positions))
    ax.set_xticklabels([label for _, label in PERCENTILES])
    ax.set_ylabel("one-way latency (ns, log)")
    title = f"latency, {size_label(line['size'])}"
    if line.get("floor_p50_ns"):
        title += f" (floor {line['floor_p50_ns']} ns)"
    ax.set_title(title)
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.legend(fontsize="small")


def plot_throughput(ax, line, colors):
    results = line["results"]
    names = [r["transport"] for r in results]
    rates = [r["msgs_per_s"] for r in results]
    lows, highs = [], []
    for r in results:
        lo, _, hi = r.get("spread", {}).get("msgs_per_s", [r["msgs_per_s"]] * 3)
        lows.append(r["msgs_per_s"] - lo)
        highs.append(hi - r["msgs_per_s"])
    bars = ax.bar(names, rates, yerr=[lows, highs], capsize=3,
                  color=[colors[n] for n in names])
    for bar, rate in zip(bars, rates):
        ax.annotate(f"{rate:.3g}", (bar.get_x() + bar.get_width() / 2, rate),
                    ha="center", va="bottom", fontsize="x-small")
    ax.set_yscale("log")
    ax.set_ylabel("messages/s (log)")
    subs = line.get("subscribers", 1)
    ax.set_title(f"throughput, {size_label(line['size'])}"
                 + (f", {subs} subscribers" if subs != 1 else ""))
    ax.tick_params(axis="x", labelrotation=30)
    ax.grid(True, which="both", axis="y", alpha=0.3)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", metavar="RESULT.json")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.svg",
                        help="the figure to write (.svg, or .png)")
    parser.add_argument("--title", help="a title above the panels")
    args = parser.parse_args()
    if not args.output.endswith((".svg", ".png")):
        fail(f"-o {args.output}: write .svg or .png")

    lines = read_lines(args.results)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, smaller
        matplotlib.rcParams["svg.hashsalt"] = "ferry-bench"  # the same input, the same file
    except ImportError:
        fail(f"matplotlib is missing for {sys.executable}; install python3-matplotlib "
             "and run this with Debian's /usr/bin/python3")

    panels = ([l for l in lines if kind_of(l) == "latency"]
              + [l for l in lines if kind_of(l) == "throughput"])
    columns = min(2, len(panels))
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(6.5 * columns, 4.5 * rows), squeeze=False)
    colors = colors_for(panels)
    for ax, line in zip(axes.flat, panels):
        if not line["results"]:
            ax.set_title(f"{kind_of(line)}, {size_label(line['size'])}: every run failed")
            continue
        (plot_latency if kind_of(line) == "latency" else plot_throughput)(ax, line, colors)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    machine = lines[0].get("machine", {})
    footer = ", ".join(str(v) for v in (machine.get("cpu"), machine.get("kernel")) if v)
    pinned = "pinned to CPUs " + ",".join(map(str, lines[0]["cpus"])) if lines[0].get("pinned") \
        else "not pinned"
    fig.suptitle(args.title or "ferry bench", fontsize="large")
    fig.text(0.5, 0.005, f"{footer}; wait {lines[0].get('wait', '?')}, "
             f"{lines[0].get('repeat', '?')} repeats (medians; bars: range), {pinned}",
             ha="center", fontsize="x-small")
    fig.tight_layout(rect=(0, 0.02, 1, 0.97))
    try:
        fig.savefig(args.output)
    except OSError as e:
        fail(f"cannot write {args.output}: {e.strerror}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
