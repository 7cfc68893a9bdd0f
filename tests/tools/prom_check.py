#!/usr/bin/python3
"""prom_check.py — a strict reader of the Prometheus text format (0.0.4).

usage: prom_check.py FILE            check FILE, print "ok N families N samples"
       prom_check.py FILE --json     check, then print every sample as JSON
       prom_check.py --exprs DASHBOARD.json   print the metric names its queries use

Exits 1 naming the line when anything breaks the format: a sample before its
family's HELP/TYPE, a family split in two, a bad name, label or value, a
counter not ending in _total, a histogram whose buckets decrease or whose
+Inf bucket differs from _count, a duplicate series.
"""
import json
import math
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"'
SAMPLE = re.compile(r"^(%s)(\{(%s(,%s)*)?\})? (\S+)$" % (NAME, LABEL, LABEL))
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}


def fail(lineno, line, why):
    sys.exit("line %d: %s: %r" % (lineno, why, line))


def parse_value(text):
    if text in ("+Inf", "-Inf", "NaN"):
        return float(text.replace("Inf", "inf").replace("NaN", "nan"))
    if not re.fullmatch(r"-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", text):
        raise ValueError(text)
    return float(text)


def family_of(name, families):
    for suffix in ("_bucket", "_sum", "_count"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base, {}).get("type") == "histogram":
            return base
    return name


def parse(text):
    families, samples, seen, closed, current = {}, [], set(), set(), None
    for lineno, line in enumerate(text.split("\n"), 1):
        if line == "":
            continue
        if line.startswith("#"):
            m = re.fullmatch(r"# (HELP|TYPE) (%s) (.+)" % NAME, line)
            if not m:
                fail(lineno, line, "malformed comment")
            kind, name, rest = m.groups()
            if name in closed:
                fail(lineno, line, "family %s appears twice" % name)
            if current and current != name:
                closed.add(current)
            current = name
            fam = families.setdefault(name, {"samples": 0})
            if kind == "TYPE":
                if rest not in TYPES or "type" in fam:
                    fail(lineno, line, "bad or repeated TYPE")
                if rest == "counter" and not name.endswith("_total"):
                    fail(lineno, line, "a counter's name must end in _total")
                fam["type"] = rest
            else:
                fam["help"] = rest
            continue
        m = SAMPLE.match(line)
        if not m:
            fail(lineno, line, "malformed sample")
        name, value = m.group(1), m.group(len(m.groups()))
        labels = dict(re.findall(LABEL, m.group(2) or ""))
        base = family_of(name, families)
        if base != current or "type" not in families.get(base, {}) or "help" not in families[base]:
            fail(lineno, line, "sample outside its family's HELP/TYPE block")
        try:
            v = parse_value(value)
        except ValueError:
            fail(lineno, line, "bad value")
        key = (name, tuple(sorted(labels.items())))
        if key in seen:
            fail(lineno, line, "duplicate series")
        seen.add(key)
        families[base]["samples"] += 1
        samples.append({"name": name, "labels": labels, "value": v, "family": base})
    check_histograms(families, samples)
    return families, samples


def check_histograms(families, samples):
    groups = {}
    for s in samples:
        if families[s["family"]]["type"] != "histogram":
            continue
        labels = {k: v for k, v in s["labels"].items() if k != "le"}
        g = groups.setdefault((s["family"], tuple(sorted(labels.items()))), {"buckets": []})
        if s["name"].endswith("_bucket"):
            g["buckets"].append((parse_value(s["labels"]["le"]), s["value"]))
        elif s["name"].endswith("_count"):
            g["count"] = s["value"]
        else:
            g["sum"] = s["value"]
    for (fam, labels), g in groups.items():
        b = sorted(g["buckets"])
        if not b or not math.isinf(b[-1][0]):
            sys.exit("histogram %s%s has no +Inf bucket" % (fam, dict(labels)))
        if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)):
            sys.exit("histogram %s%s: buckets decrease" % (fam, dict(labels)))
        if "count" not in g or "sum" not in g or b[-1][1] != g["count"]:
            sys.exit("histogram %s%s: +Inf bucket differs from _count or _sum/_count missing"
                     % (fam, dict(labels)))


def dashboard_metrics(path):
    with open(path) as f:
        board = json.load(f)
    names = set()
    for panel in board.get("panels", []):
        for target in panel.get("targets", []):
            names.update(re.findall(r"\b(loadcluster_[a-z_]+|loadworker_[a-z_]+)", target["expr"]))
    return names


def main():
    if sys.argv[1] == "--exprs":
        print("\n".join(sorted(dashboard_metrics(sys.argv[2]))))
        return
    with open(sys.argv[1]) as f:
        families, samples = parse(f.read())
    if "--json" in sys.argv:
        json.dump(samples, sys.stdout)
    else:
        print("ok %d families %d samples" % (len(families), len(samples)))


if __name__ == "__main__":
    main()
