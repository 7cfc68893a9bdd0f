#!/usr/bin/python3
"""check_k8s.py — checks deploy/k8s (kustomize) and deploy/container/Containerfile
against each other and against the built binaries; used by
tests/integration/test_k8s_manifests.sh.

  check_k8s.py check --src SRC --bin BIN
      Static checks. One line per assertion, "ok: ..." or "FAILED: ...: why";
      exits 1 when any failed.
  check_k8s.py materialize --src SRC --out DIR --ports P1,P2,...
      Lays out the files the manifests' pods would see (ConfigMap and Secret
      keys, data directories) under DIR/<pod>/, with nodes.conf's names and
      ports rewritten to localhost and the given free ports, and prints a JSON
      plan: per pod its host name, binary, args and probe URLs.
"""

import argparse
import glob
import json
import math
import os
import re
import secrets
import shutil
import subprocess
import sys

import yaml

K8S = "deploy/k8s"
BASE = "deploy/k8s/base"
CONTAINERFILE = "deploy/container/Containerfile"
SECRET_EXAMPLE = "deploy/k8s/secret.example.yaml"
MASTER, WORKER = "loadmaster", "loadworker"
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")

# common/lc_nodes_conf.h and master/auth.h / common/lc_join.h bounds.
NODES_MAX = 9
NODE_ID_MAX = NODES_MAX * 1000
TOKEN_MIN, TOKEN_MAX = 16, 256
JOIN_SECRET_MIN, JOIN_SECRET_MAX = 16, 4096


class Failed(Exception):
    """A check that could not even be evaluated (missing object, ...)."""


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, what, ok, why=""):
        if ok:
            self.passed += 1
            print(f"ok: {what}")
        else:
            self.failed += 1
            print(f"FAILED: {what}" + (f": {why}" if why else ""))
        return ok

    def run(self, what, fn):
        """fn() returns (ok, why) or raises Failed."""
        try:
            ok, why = fn()
        except Failed as e:
            ok, why = False, str(e)
        return self.check(what, ok, why)

    def skip(self, what, why):
        print(f"skipped: {what}: {why}")


# ---------------------------------------------------------------- loading


def load_yaml_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def find_kustomization(directory):
    for name in KUSTOMIZATION_NAMES:
        p = os.path.join(directory, name)
        if os.path.isfile(p):
            return p
    return None


def kustomization_refs(kfile):
    """Every local path a kustomization refers to: (field, path)."""
    k = load_yaml_docs(kfile)[0]
    refs = []
    for field in ("resources", "components", "crds", "patchesStrategicMerge"):
        for r in k.get(field) or []:
            if isinstance(r, str):
                refs.append((field, r))
    for p in k.get("patches") or []:
        if isinstance(p, dict) and "path" in p:
            refs.append(("patches", p["path"]))
    for field in ("configMapGenerator", "secretGenerator"):
        for g in k.get(field) or []:
            for f in (g.get("files") or []) + (g.get("envs") or []):
                refs.append((field, f.split("=", 1)[-1]))
    return k, refs


def is_remote(ref):
    return "://" in ref or ref.startswith("github.com/")


def build_objects(directory, seen=None):
    """The objects of a kustomization as written (no transformers applied),
    following resources into other kustomizations."""
    seen = seen or set()
    kfile = find_kustomization(directory)
    if kfile is None:
        raise Failed(f"{directory}: no kustomization file")
    if kfile in seen:
        raise Failed(f"{kfile}: kustomization cycle")
    seen.add(kfile)
    k, _ = kustomization_refs(kfile)
    objs = []
    for r in k.get("resources") or []:
        p = os.path.normpath(os.path.join(directory, r))
        if os.path.isdir(p):
            objs += build_objects(p, seen)
        elif os.path.isfile(p):
            objs += load_yaml_docs(p)
        else:
            raise Failed(f"{kfile}: resource {r} does not exist")
    return objs


def by_kind(objs, kind):
    return [o for o in objs if o.get("kind") == kind]


def named(objs, kind, name):
    for o in by_kind(objs, kind):
        if o.get("metadata", {}).get("name") == name:
            return o
    raise Failed(f"no {kind} named {name}")


# ---------------------------------------------------------------- pod helpers


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def pod_spec(workload):
    return workload["spec"]["template"]["spec"]


def pod_labels(workload):
    return workload["spec"]["template"].get("metadata", {}).get("labels") or {}


def main_container(workload):
    cs = pod_spec(workload).get("containers") or []
    if not cs:
        raise Failed(f"{workload['metadata']['name']}: no containers")
    return cs[0]


def container_port(container, ref):
    """The number of a port given by name or number, or None."""
    for p in container.get("ports") or []:
        if ref == p.get("name") or ref == p.get("containerPort"):
            return p.get("containerPort")
    return None


def workload_port(workload, ref):
    for c in pod_spec(workload).get("containers") or []:
        n = container_port(c, ref)
        if n is not None:
            return n
    return None


def flag_value(args, flag):
    """The value of --flag in args (--flag V or --flag=V), or None."""
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def flags_of(args):
    return [a.split("=", 1)[0] for a in args if isinstance(a, str) and a.startswith("--")]


def parse_cpu(text):
    text = str(text)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def env_value(container, name):
    """What Kubernetes substitutes for $(name) in args, as far as the
    manifest alone decides it."""
    for e in container.get("env") or []:
        if e.get("name") != name:
            continue
        if "value" in e:
            return str(e["value"])
        ref = (e.get("valueFrom") or {}).get("resourceFieldRef")
        if ref and ref.get("resource") in ("limits.cpu", "requests.cpu"):
            kind, what = ref["resource"].split(".")
            amount = container.get("resources", {}).get(kind, {}).get(what)
            if amount is None:
                return None
            divisor = parse_cpu(ref.get("divisor", "1"))
            return str(math.ceil(parse_cpu(amount) / divisor))
        return None
    return None


def expand_args(container):
    out = []
    for a in container.get("args") or []:
        a = str(a)
        for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", a):
            v = env_value(container, var)
            if v is None:
                raise Failed(f"$({var}) in args has no value in env")
            a = a.replace(f"$({var})", v)
        out.append(a)
    return out


def volume_files(workload, objs, secrets_known):
    """{path in the container: (kind, source name, key, content)} of the
    ConfigMap and Secret volumes, and {mountPath: volume kind} of the rest."""
    spec = pod_spec(workload)
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    claims = {c["metadata"]["name"] for c in workload["spec"].get("volumeClaimTemplates") or []}
    files, dirs = {}, {}
    for c in spec.get("containers") or []:
        for m in c.get("volumeMounts") or []:
            mp = m["mountPath"].rstrip("/")
            if m["name"] in claims:
                dirs[mp] = "claim"
                continue
            v = volumes.get(m["name"])
            if v is None:
                raise Failed(f"volumeMount {m['name']} names no volume or claim")
            if "emptyDir" in v:
                dirs[mp] = "emptyDir"
            elif "configMap" in v or "secret" in v:
                kind = "configMap" if "configMap" in v else "secret"
                src = v[kind]
                name = src.get("name") if kind == "configMap" else src.get("secretName")
                data = config_map_data(objs, name) if kind == "configMap" else secrets_known.get(name)
                if data is None:
                    raise Failed(f"volume {v['name']}: {kind} {name} is not defined")
                items = src.get("items") or [{"key": k, "path": k} for k in data]
                for it in items:
                    if it["key"] not in data:
                        raise Failed(f"volume {v['name']}: {kind} {name} has no key {it['key']}")
                    files[f"{mp}/{it['path']}"] = (kind, name, it["key"], data[it["key"]])
            else:
                raise Failed(f"volume {v['name']}: a kind this checker does not know")
    return files, dirs


def config_map_data(objs, name):
    for cm in by_kind(objs, "ConfigMap"):
        if cm["metadata"]["name"] == name:
            return dict(cm.get("data") or {})
    return None


def secret_data(doc):
    data = dict(doc.get("stringData") or {})
    for k in doc.get("data") or {}:
        data.setdefault(k, None)  # base64: present, content not looked at
    return data


# ---------------------------------------------------------------- nodes.conf


def parse_hostport(text):
    """lc_hostport_parse with no default port: (host, port) or raises."""
    if text.startswith("["):
        m = re.fullmatch(r"\[([^\]]+)\]:(\d+)", text)
        if not m:
            raise ValueError(f"'{text}': expected host:port")
        host, port = m.group(1), m.group(2)
    else:
        if text.count(":") != 1:
            raise ValueError(f"'{text}': expected host:port")
        host, port = text.rsplit(":", 1)
    if not host or len(host) >= 256 or any(c <= " " or c in "/@" for c in host):
        raise ValueError(f"'{text}': expected host:port")
    if not re.fullmatch(r"[0-9]+", port) or not 1 <= int(port) <= 65535:
        raise ValueError(f"'{text}': port must be a number from 1 to 65535")
    return host, int(port)


def parse_nodes_conf(text):
    """common/lc_nodes_conf.c's rules: [(id, {raft, worker, api: (host, port)})]."""
    nodes, seen_addr = [], {}
    for lineno, line in enumerate(text.split("\n"), 1):
        if len(line) > 1024:
            raise ValueError(f"line {lineno}: longer than 1024 characters")
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 4:
            raise ValueError(f"line {lineno}: expected 4 fields, got {len(fields)}")
        if not re.fullmatch(r"[0-9]{1,6}", fields[0]) or not 1 <= int(fields[0]) <= NODE_ID_MAX:
            raise ValueError(f"line {lineno}: id must be an integer from 1 to {NODE_ID_MAX}")
        node_id = int(fields[0])
        if any(n[0] == node_id for n in nodes):
            raise ValueError(f"line {lineno}: duplicate id {node_id}")
        addrs = {}
        for kind, f in zip(("raft", "worker", "api"), fields[1:]):
            host, port = parse_hostport(f)
            key = (host.lower(), port)
            if key in seen_addr:
                raise ValueError(f"line {lineno}: {kind} address {f} already used")
            seen_addr[key] = lineno
            addrs[kind] = (host, port)
        nodes.append((node_id, addrs))
        if len(nodes) > NODES_MAX:
            raise ValueError(f"line {lineno}: more than {NODES_MAX} nodes")
    if not nodes:
        raise ValueError("no nodes")
    return nodes


def id_from_hostname(host):
    """master/config.c's --id auto: the ordinal after the last '-', plus one."""
    dash = host.rfind("-")
    if dash < 0 or not re.fullmatch(r"[0-9]+", host[dash + 1:]) or int(host[dash + 1:]) >= 9000:
        return None
    return int(host[dash + 1:]) + 1


def pod_dns_re(pod, headless):
    return re.compile(rf"{re.escape(pod)}\.{re.escape(headless)}(\.[a-z0-9-]+(\.svc(\.cluster\.local)?)?)?")


# ---------------------------------------------------------------- Containerfile


def containerfile_instructions(path):
    """[(instruction, argument text)] with continuations joined, comments dropped."""
    out, cur = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if cur and line.lstrip().startswith("#"):
                continue
            if line.rstrip().endswith("\\"):
                cur += line.rstrip()[:-1] + " "
                continue
            cur += line
            ins, _, arg = cur.strip().partition(" ")
            out.append((ins.upper(), arg.strip()))
            cur = ""
    return out


def apt_packages(run_arg):
    pkgs = []
    for m in re.finditer(r"apt-get\s+install\s+(.*?)(?:&&|;|$)", run_arg):
        pkgs += [t for t in m.group(1).split() if not t.startswith("-")]
    return pkgs


def containerfile_stages(path):
    stages = []
    for ins, arg in containerfile_instructions(path):
        if ins == "FROM":
            parts = arg.split()
            stages.append({"image": parts[0], "name": parts[2] if len(parts) >= 3 and parts[1].lower() == "as" else None,
                           "run": [], "copy": [], "user": None, "expose": [], "cmd": None, "entrypoint": None})
        elif stages:
            st = stages[-1]
            if ins == "RUN":
                st["run"].append(arg)
            elif ins == "COPY":
                st["copy"].append(arg)
            elif ins == "USER":
                st["user"] = arg
            elif ins == "EXPOSE":
                st["expose"] += [int(p.split("/")[0]) for p in arg.split()]
            elif ins in ("CMD", "ENTRYPOINT"):
                st[ins.lower()] = json.loads(arg) if arg.startswith("[") else arg.split()
    return stages


def cmake_executables(src):
    with open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8") as f:
        return set(re.findall(r"add_executable\(\s*([A-Za-z0-9_]+)", f.read()))


def makefile_packages(src):
    with open(os.path.join(src, "Makefile.ci"), encoding="utf-8") as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r"^DEBIAN_PACKAGES\s*:?=\s*(.*)$", text, re.M)
    if not m:
        raise Failed("Makefile.ci has no DEBIAN_PACKAGES")
    return set(m.group(1).split())


# ---------------------------------------------------------------- check


def check_files(rep, src, objs_out):
    k8s = os.path.join(src, K8S)
    files = sorted(glob.glob(f"{k8s}/**/*.yaml", recursive=True) + glob.glob(f"{k8s}/**/*.yml", recursive=True))
    rep.check("deploy/k8s has YAML files", len(files) > 0, f"none under {k8s}")
    for f in files:
        rel = os.path.relpath(f, src)

        def parse(f=f):
            docs = load_yaml_docs(f)
            if not docs:
                return False, "no documents"
            for d in docs:
                if not isinstance(d, dict) or "apiVersion" not in d or "kind" not in d:
                    return False, "a document without apiVersion and kind"
                if d["kind"] != "Kustomization" and not d.get("metadata", {}).get("name"):
                    return False, f"a {d['kind']} without metadata.name"
            return True, ""

        try:
            rep.run(f"{rel} parses ({len(load_yaml_docs(f))} documents)", parse)
        except yaml.YAMLError as e:
            rep.check(f"{rel} parses", False, str(e).replace("\n", " "))
    kfiles = [f for f in files + glob.glob(f"{k8s}/**/Kustomization", recursive=True)
              if os.path.basename(f) in KUSTOMIZATION_NAMES]
    rep.check("deploy/k8s/base has a kustomization", find_kustomization(os.path.join(src, BASE)) is not None)
    for kf in kfiles:
        d = os.path.dirname(kf)
        rel = os.path.relpath(kf, src)
        _, refs = kustomization_refs(kf)
        missing = []
        for field, r in refs:
            if is_remote(r):
                continue
            p = os.path.normpath(os.path.join(d, r))
            if os.path.isdir(p) and field in ("resources", "components"):
                if find_kustomization(p) is None:
                    missing.append(f"{r} (a directory without kustomization)")
            elif not os.path.isfile(p):
                missing.append(r)
        rep.check(f"{rel}: every referenced file exists ({len(refs)})", not missing, ", ".join(missing))
        rep.check(f"{rel}: does not deploy secret.example.yaml",
                  not any(os.path.basename(r) == "secret.example.yaml" for _, r in refs))
        if os.path.isfile(kf):
            try:
                objs_out[os.path.relpath(d, src)] = build_objects(d)
            except Failed as e:
                rep.check(f"{rel}: builds", False, str(e))


def check_kubectl(rep, src, objs_by_dir):
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        rep.skip("kubectl kustomize", "kubectl is not installed")
        return
    for d, objs in sorted(objs_by_dir.items()):
        r = subprocess.run([kubectl, "kustomize", os.path.join(src, d)], capture_output=True, text=True, timeout=60)
        if not rep.check(f"kubectl kustomize {d}", r.returncode == 0, r.stderr.strip()[:300]):
            continue
        out = [o for o in yaml.safe_load_all(r.stdout) if o]
        ours = sorted((o["kind"], o["metadata"]["name"]) for o in objs)
        theirs = sorted((o["kind"], o["metadata"]["name"]) for o in out)
        rep.check(f"kubectl kustomize {d}: the objects this checker reads ({len(ours)})", ours == theirs,
                  f"kustomize {theirs} vs {ours}")
        k = load_yaml_docs(find_kustomization(os.path.join(src, d)))[0]
        if k.get("namespace"):
            wrong = [o["metadata"]["name"] for o in out
                     if o["kind"] != "Namespace" and o["metadata"].get("namespace") != k["namespace"]]
            rep.check(f"kubectl kustomize {d}: everything in namespace {k['namespace']}", not wrong, ", ".join(wrong))


def check_workloads(rep, objs, secrets_known, image_bins, help_of):
    services = by_kind(objs, "Service")
    workloads = by_kind(objs, "StatefulSet") + by_kind(objs, "Deployment")
    for w in workloads:
        name = w["metadata"]["name"]
        labels = pod_labels(w)
        sel = (w["spec"].get("selector") or {}).get("matchLabels") or {}
        rep.check(f"{name}: selector matches its pod template labels", matches(sel, labels), f"{sel} vs {labels}")
        others = [o["metadata"]["name"] for o in workloads if o is not w and matches(sel, pod_labels(o))]
        rep.check(f"{name}: selector matches no other workload's pods", not others, ", ".join(others))
        if w["kind"] == "StatefulSet":
            def headless(w=w):
                svc = named(objs, "Service", w["spec"].get("serviceName"))
                return (svc["spec"].get("clusterIP") == "None" and matches(svc["spec"].get("selector"), pod_labels(w)),
                        "not headless or does not select these pods")
            rep.run(f"{name}: serviceName {w['spec'].get('serviceName')} is a headless Service of its pods", headless)
        for c in pod_spec(w).get("containers") or []:
            cn = f"{name}/{c['name']}"
            res = c.get("resources") or {}
            rep.check(f"{cn}: cpu and memory requests and limits",
                      all(res.get(k, {}).get(r) for k in ("requests", "limits") for r in ("cpu", "memory")), str(res))
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                hg = (c.get(probe) or {}).get("httpGet")
                if hg:
                    rep.check(f"{cn}: {probe} port {hg.get('port')} is a container port",
                              container_port(c, hg.get("port")) is not None)
            cmd = (c.get("command") or [None])[0]
            rep.check(f"{cn}: command {cmd} is a program the image installs", cmd in image_bins,
                      f"image has {sorted(image_bins)}")
            try:
                args = expand_args(c)
                rep.check(f"{cn}: every $(VAR) in args is defined in env", True)
            except Failed as e:
                rep.check(f"{cn}: every $(VAR) in args is defined in env", False, str(e))
                args = [str(a) for a in c.get("args") or []]
            help_text = help_of(cmd) if cmd in (MASTER, WORKER) else None
            if help_text is not None:
                unknown = [f for f in flags_of(args) if not re.search(re.escape(f) + r"(?![A-Za-z0-9-])", help_text)]
                rep.check(f"{cn}: every flag in args is in `{cmd} --help` ({len(flags_of(args))})", not unknown,
                          "not in --help: " + " ".join(unknown))
            ann = w["spec"]["template"].get("metadata", {}).get("annotations") or {}
            if ann.get("prometheus.io/scrape") == "true":
                port = ann.get("prometheus.io/port", "")
                rep.check(f"{cn}: prometheus.io/port {port} is a container port",
                          port.isdigit() and container_port(c, int(port)) is not None)
            sc = pod_spec(w).get("securityContext") or {}
            rep.check(f"{cn}: runs as non-root", sc.get("runAsNonRoot") is True and sc.get("runAsUser", 0) != 0)
        def mounts(w=w):
            files, dirs = volume_files(w, objs, secrets_known)
            return True, ""
        rep.run(f"{name}: volumeMounts name defined volumes/claims, and mounted ConfigMap/Secret keys exist", mounts)
    for svc in services:
        sname = svc["metadata"]["name"]
        targets = [w for w in workloads if matches(svc["spec"].get("selector"), pod_labels(w))]
        if not rep.check(f"Service {sname} selects the pods of exactly one workload", len(targets) == 1,
                         f"selects {[t['metadata']['name'] for t in targets]}"):
            continue
        for p in svc["spec"].get("ports") or []:
            target = p.get("targetPort", p.get("port"))
            num = workload_port(targets[0], target)
            rep.check(f"Service {sname} port {p.get('name')}: target {target} is a port of {targets[0]['metadata']['name']}"
                      f" and equals the service port", num is not None and num == p.get("port"),
                      f"container port {num}, service port {p.get('port')}")


def check_master(rep, src, bindir, objs, secrets_known):
    m = named(objs, "StatefulSet", MASTER)
    c = main_container(m)
    args = expand_args(c)
    spec = m["spec"]
    replicas = spec.get("replicas", 1)
    rep.check(f"{MASTER}: 3 replicas (an odd quorum)", replicas == 3, f"replicas {replicas}")
    rep.check(f"{MASTER}: podManagementPolicy Parallel", spec.get("podManagementPolicy") == "Parallel")
    headless_name = spec.get("serviceName")
    headless = named(objs, "Service", headless_name)
    rep.check(f"{headless_name}: clusterIP None and publishNotReadyAddresses (peers resolve before ready)",
              headless["spec"].get("clusterIP") == "None" and headless["spec"].get("publishNotReadyAddresses") is True)
    files, dirs = volume_files(m, objs, secrets_known)

    # Flags the pod needs.
    rep.check(f"{MASTER}: --id auto", flag_value(args, "--id") == "auto", f"--id {flag_value(args, '--id')}")
    data_dir = flag_value(args, "--data-dir")
    claims = {x["metadata"]["name"] for x in spec.get("volumeClaimTemplates") or []}
    data_mount = [mt for mt in c.get("volumeMounts") or [] if mt["mountPath"].rstrip("/") == (data_dir or "").rstrip("/")]
    rep.check(f"{MASTER}: --data-dir {data_dir} is a volumeClaimTemplate mount",
              bool(data_mount) and data_mount[0]["name"] in claims, f"claims {sorted(claims)}")
    for flag, key in (("--cluster", "nodes.conf"), ("--admin-token-file", "admin-token"),
                      ("--join-secret-file", "join-secret"), ("--cluster-secret-file", "cluster-secret")):
        path = flag_value(args, flag)
        f = files.get(path)
        rep.check(f"{MASTER}: {flag} {path} is the mounted key {key}", f is not None and f[2] == key,
                  f"mounted: {sorted(files)}")
    rep.check(f"{MASTER}: admin token, join and cluster secrets come from a Secret",
              all(files.get(flag_value(args, fl), ("",))[0] == "secret"
                  for fl in ("--admin-token-file", "--join-secret-file", "--cluster-secret-file")))
    rep.check(f"{MASTER}: nodes.conf comes from a ConfigMap", files.get(flag_value(args, "--cluster"), ("",))[0] == "configMap")

    # nodes.conf: our reading of lc_nodes_conf.c, then the real parser.
    conf_text = files[flag_value(args, "--cluster")][3]
    try:
        nodes = parse_nodes_conf(conf_text)
        rep.check(f"nodes.conf parses ({len(nodes)} masters)", True)
    except ValueError as e:
        rep.check("nodes.conf parses", False, str(e))
        return
    tmp = os.path.join(os.environ.get("WORK", "/tmp"), f"nodes.conf.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(conf_text)
    r = subprocess.run([os.path.join(bindir, MASTER), "--cluster", tmp, "--help"], capture_output=True, text=True, timeout=20)
    os.unlink(tmp)
    rep.check("nodes.conf is accepted by loadmaster's own parser (--cluster FILE --help)", r.returncode == 0,
              r.stderr.strip())
    ids = {n[0]: n[1] for n in nodes}
    pods = [f"{MASTER}-{i}" for i in range(replicas)]
    rep.check("--id auto maps pods " + ",".join(pods) + " to the ids of nodes.conf",
              sorted(id_from_hostname(p) for p in pods) == sorted(ids), f"ids {sorted(ids)}")
    bad = []
    for p in pods:
        addrs = ids.get(id_from_hostname(p), {})
        for kind, (host, _) in addrs.items():
            if not pod_dns_re(p, headless_name).fullmatch(host):
                bad.append(f"{p} {kind} {host}")
    rep.check(f"nodes.conf: each id's addresses are its pod's name under {headless_name}", not bad, "; ".join(bad))
    ports = {kind: {a[kind][1] for a in ids.values()} for kind in ("raft", "worker", "api")}
    rep.check("nodes.conf: every master uses the same raft, worker and API ports",
              all(len(v) == 1 for v in ports.values()), str(ports))
    raft_port, worker_port, api_port = (min(ports[k]) for k in ("raft", "worker", "api"))
    cports = {p["containerPort"] for p in c.get("ports") or []}
    rep.check(f"{MASTER}: container ports are nodes.conf's {raft_port}, {worker_port}, {api_port}",
              cports == {raft_port, worker_port, api_port}, f"container ports {sorted(cports)}")
    hports = {p["port"] for p in headless["spec"].get("ports") or []}
    rep.check(f"{headless_name}: exposes nodes.conf's ports", {raft_port, worker_port, api_port} <= hports, f"{sorted(hports)}")
    # Addresses come from this pod's nodes.conf line; a flag may override one,
    # but then at the same port (the other masters only know nodes.conf).
    clash = []
    for flag, port in (("--raft-addr", raft_port), ("--listen-workers", worker_port),
                       ("--listen-api", api_port), ("--advertise", worker_port)):
        v = flag_value(args, flag)
        if v is not None:
            try:
                if parse_hostport(v)[1] != port:
                    clash.append(f"{flag} {v}")
            except ValueError:
                clash.append(f"{flag} {v}")
    rep.check(f"{MASTER}: no address flag contradicts nodes.conf's ports", not clash, " ".join(clash))

    # Services of the API and of the worker port (not the headless one).
    def plain_service(port):
        for s in by_kind(objs, "Service"):
            if s["spec"].get("clusterIP") != "None" and matches(s["spec"].get("selector"), pod_labels(m)) \
                    and any(p.get("port") == port for p in s["spec"].get("ports") or []):
                return s["metadata"]["name"]
        return None
    rep.check(f"a Service exposes the masters' API port {api_port}", plain_service(api_port) is not None)
    rep.check(f"a Service exposes the masters' worker port {worker_port}", plain_service(worker_port) is not None)

    # Probes.
    ready = (c.get("readinessProbe") or {}).get("httpGet") or {}
    live = (c.get("livenessProbe") or {}).get("httpGet") or {}
    rep.check(f"{MASTER}: readiness probe GET /readyz on the API port {api_port}",
              ready.get("path") == "/readyz" and container_port(c, ready.get("port")) == api_port, str(ready))
    rep.check(f"{MASTER}: liveness probe GET /healthz on the API port {api_port}",
              live.get("path") == "/healthz" and container_port(c, live.get("port")) == api_port, str(live))

    # Prometheus scrape annotations.
    ann = m["spec"]["template"].get("metadata", {}).get("annotations") or {}
    rep.check(f"{MASTER}: prometheus.io annotations scrape /metrics on {api_port}",
              ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/path") == "/metrics"
              and ann.get("prometheus.io/port") == str(api_port), str(ann))

    # Anti-affinity.
    terms = (((pod_spec(m).get("affinity") or {}).get("podAntiAffinity") or {})
             .get("preferredDuringSchedulingIgnoredDuringExecution") or [])
    rep.check(f"{MASTER}: preferred pod anti-affinity by host name against other masters",
              any(t.get("podAffinityTerm", {}).get("topologyKey") == "kubernetes.io/hostname"
                  and matches((t["podAffinityTerm"].get("labelSelector") or {}).get("matchLabels"), pod_labels(m))
                  for t in terms))

    # PodDisruptionBudget.
    pdbs = [p for p in by_kind(objs, "PodDisruptionBudget")
            if matches((p["spec"].get("selector") or {}).get("matchLabels"), pod_labels(m))]
    rep.check("a PodDisruptionBudget selects the masters", len(pdbs) == 1, f"{len(pdbs)} do")
    if pdbs:
        spec_pdb = pdbs[0]["spec"]
        rep.check("the masters' PDB: minAvailable 2 (a majority of 3)",
                  spec_pdb.get("minAvailable") == 2 and replicas // 2 < spec_pdb["minAvailable"] < replicas,
                  str(spec_pdb))
        for w in by_kind(objs, "StatefulSet"):
            if w is not m:
                rep.check(f"the masters' PDB does not select {w['metadata']['name']}",
                          not matches(spec_pdb["selector"].get("matchLabels"), pod_labels(w)))
    check_network_policy(rep, objs, m, raft_port, worker_port, api_port)
    return {"headless": headless_name, "worker_port": worker_port, "pods": pods,
            "join_secret": files[flag_value(args, "--join-secret-file")][1:3]}


def check_network_policy(rep, objs, m, raft_port, worker_port, api_port):
    """A NetworkPolicy admits only the masters to the Raft port; the worker
    port and the API stay open to everyone (a policy that selects a pod denies
    every port it does not admit)."""
    c = main_container(m)
    labels = pod_labels(m)
    pols = [p for p in by_kind(objs, "NetworkPolicy")
            if matches((p["spec"].get("podSelector") or {}).get("matchLabels"), labels)
            and "Ingress" in (p["spec"].get("policyTypes") or ["Ingress"])]
    if not rep.check("a NetworkPolicy selects the masters' pods (their StatefulSet's labels)", len(pols) == 1,
                     f"{len(pols)} do"):
        return
    spec = pols[0]["spec"]
    name = pols[0]["metadata"]["name"]
    others = [w for w in by_kind(objs, "StatefulSet") + by_kind(objs, "Deployment") if w is not m]
    rep.check(f"{name}: selects no other workload",
              not any(matches(spec["podSelector"].get("matchLabels"), pod_labels(w)) for w in others))

    def rule_ports(rule):
        if "ports" not in rule:
            return None  # every port
        return {container_port(c, p.get("port")) if isinstance(p.get("port"), str) else p.get("port")
                for p in rule["ports"] if p.get("protocol", "TCP") == "TCP"}

    def from_masters_only(rule):
        peers = rule.get("from")
        return bool(peers) and all(set(peer) == {"podSelector"} and
                                   matches((peer["podSelector"] or {}).get("matchLabels"), labels) and
                                   not any(matches(peer["podSelector"].get("matchLabels"), pod_labels(w))
                                           for w in others)
                                   for peer in peers)

    rules = spec.get("ingress") or []
    raft_rules = [r for r in rules if rule_ports(r) is None or raft_port in rule_ports(r)]
    rep.check(f"{name}: the Raft port {raft_port} is admitted from the master pods",
              any(from_masters_only(r) for r in raft_rules), str(raft_rules))
    rep.check(f"{name}: and from nowhere else (no other rule, namespace or ipBlock admits {raft_port})",
              bool(raft_rules) and all(from_masters_only(r) for r in raft_rules), str(raft_rules))
    for what, port in (("worker port", worker_port), ("API port", api_port)):
        rep.check(f"{name}: the {what} {port} stays open to every source",
                  any(not r.get("from") and rule_ports(r) is not None and port in rule_ports(r) for r in rules),
                  str(rules))


def check_worker(rep, objs, secrets_known, master_info):
    w = named(objs, "StatefulSet", WORKER)
    c = main_container(w)
    args = expand_args(c)
    files, dirs = volume_files(w, objs, secrets_known)
    join = flag_value(args, "--join") or ""
    want = {(f"{p}.{master_info['headless']}", master_info["worker_port"]) for p in master_info["pods"]}
    got = set()
    for a in join.split(","):
        try:
            got.add(parse_hostport(a))
        except ValueError:
            got.add((a, None))
    rep.check(f"{WORKER}: --join names every master's pod under {master_info['headless']} at its worker port",
              got == want, f"--join {join}")
    js = files.get(flag_value(args, "--join-secret-file") or "")
    rep.check(f"{WORKER}: --join-secret-file is the masters' join secret (same Secret and key)",
              js is not None and js[0] == "secret" and list(js[1:3]) == list(master_info["join_secret"]),
              f"{js and js[1:3]} vs {master_info['join_secret']}")
    rep.check(f"{WORKER}: the admin token is not mounted",
              not any(f[0] == "secret" and f[2] == "admin-token" for f in files.values()))
    rep.check(f"{WORKER}: the cluster secret is not mounted (only masters may speak Raft)",
              not any(f[0] == "secret" and f[2] == "cluster-secret" for f in files.values()))
    cap = flag_value(args, "--capacity")
    rep.check(f"{WORKER}: --capacity given explicitly", cap is not None and cap.isdigit() and int(cap) > 0, f"{cap}")
    threads = flag_value(args, "--threads")
    rep.check(f"{WORKER}: --threads given (the node's core count is not the pod's)",
              threads is not None and threads.isdigit() and int(threads) >= 1, f"{threads}")
    data_dir = flag_value(args, "--data-dir")
    rep.check(f"{WORKER}: --data-dir {data_dir} is a writable volume", (data_dir or "").rstrip("/") in dirs,
              f"writable mounts {sorted(dirs)}")
    grace = pod_spec(w).get("terminationGracePeriodSeconds", 30)
    rep.check(f"{WORKER}: terminationGracePeriodSeconds {grace} leaves room for the 10 s stop-and-flush",
              isinstance(grace, int) and grace >= 20)
    health = flag_value(args, "--health-addr")
    try:
        hhost, hport = parse_hostport(health or "")
    except ValueError:
        hhost, hport = None, None
    rep.check(f"{WORKER}: --health-addr {health} listens on every interface",
              hhost in ("0.0.0.0", "::"), "probes come from the kubelet, not from localhost")
    rep.check(f"{WORKER}: the health port {hport} is a container port", hport is not None and container_port(c, hport) is not None)
    for probe in ("readinessProbe", "livenessProbe"):
        hg = (c.get(probe) or {}).get("httpGet") or {}
        rep.check(f"{WORKER}: {probe} GET /healthz on the --health-addr port",
                  hg.get("path") == "/healthz" and hport is not None and container_port(c, hg.get("port")) == hport, str(hg))


def token_format_ok(text):
    """master/auth.c's auth_token_format_ok."""
    return bool(re.fullmatch(r"[A-Za-z0-9._~+/-]+=*", text)) and TOKEN_MIN <= len(text) <= TOKEN_MAX


def check_secret_example(rep, src, secrets_known):
    docs = load_yaml_docs(os.path.join(src, SECRET_EXAMPLE))
    sec = [d for d in docs if d.get("kind") == "Secret"]
    if not rep.check("secret.example.yaml holds one Secret", len(sec) == 1):
        return
    data = secret_data(sec[0])
    rep.check("secret.example.yaml has admin-token, join-secret and cluster-secret",
              {"admin-token", "join-secret", "cluster-secret"} <= set(data), f"keys {sorted(data)}")
    tok = (data.get("admin-token") or "").rstrip("\r\n\t ")
    rep.check("secret.example.yaml: the admin-token placeholder is not a usable token", not token_format_ok(tok))
    for key in ("join-secret", "cluster-secret"):
        js = (data.get(key) or "").encode().rstrip(b"\r\n")
        rep.check(f"secret.example.yaml: the {key} placeholder is too short to be used", len(js) < JOIN_SECRET_MIN)


def check_containerfile(rep, src, bindir, objs):
    path = os.path.join(src, CONTAINERFILE)
    if not rep.check("deploy/container/Containerfile exists", os.path.isfile(path)):
        return set()
    stages = containerfile_stages(path)
    rep.check(f"Containerfile: at least 2 stages ({len(stages)})", len(stages) >= 2)
    debian = re.compile(r"(docker\.io/(library/)?)?debian:(12|bookworm)(-slim)?(@sha256:[0-9a-f]{64})?")
    rep.check("Containerfile: every stage is FROM debian:12 (bookworm)",
              bool(stages) and all(debian.fullmatch(s["image"]) for s in stages), " ".join(s["image"] for s in stages))
    if not stages:
        return set()
    final = stages[-1]
    build_names = {s["name"] for s in stages[:-1] if s["name"]}
    user = (final["user"] or "root").split(":")[0]
    rep.check(f"Containerfile: the final stage runs as a non-root USER ({final['user']})",
              user not in ("root", "0"))
    uids = {(pod_spec(w).get("securityContext") or {}).get("runAsUser") for w in by_kind(objs, "StatefulSet")}
    rep.check(f"Containerfile: USER is the manifests' runAsUser {sorted(uids, key=str)}",
              user.isdigit() and uids == {int(user)})
    exposed = set(final["expose"])
    rep.check("Containerfile: EXPOSE 5556 5557 8089 8090", {5556, 5557, 8089, 8090} <= exposed, str(sorted(exposed)))
    cports = {p["containerPort"] for w in by_kind(objs, "StatefulSet") for c in pod_spec(w)["containers"]
              for p in c.get("ports") or []}
    rep.check("Containerfile: EXPOSEs every container port of the manifests", cports <= exposed, f"{sorted(cports - exposed)}")

    # The programs: copied from a build stage, built there, declared by CMake.
    bins = set()
    for cp in final["copy"]:
        parts = cp.split()
        if any(p.startswith("--from=") and p.split("=", 1)[1] in build_names | {"0"} for p in parts):
            bins |= {os.path.basename(p) for p in parts[:-1] if not p.startswith("--")}
    targets = cmake_executables(src)
    rep.check(f"Containerfile: copies loadmaster, loadworker, loadctl from the build stage ({sorted(bins)})",
              {MASTER, WORKER, "loadctl"} <= bins)
    rep.check("Containerfile: every copied program is a CMake executable", bins and bins <= targets,
              f"not targets: {sorted(bins - targets)}")
    built = set()
    for s in stages[:-1]:
        for r in s["run"]:
            for m in re.finditer(r"--target\s+((?:[A-Za-z0-9_]+\s*)+)", r):
                built |= set(m.group(1).split())
    rep.check("Containerfile: the build stage builds every copied program (--target)", bins <= built,
              f"built {sorted(built)}")
    for what in ("cmd", "entrypoint"):
        if final[what]:
            prog = os.path.basename(final[what][0])
            rep.check(f"Containerfile: {what.upper()} {prog} is an installed program", prog in bins)

    # Packages: the build stage's from Makefile.ci; the runtime's cover the binaries' libraries.
    build_pkgs = {p for s in stages[:-1] for r in s["run"] for p in apt_packages(r)}
    run_pkgs = {p for r in final["run"] for p in apt_packages(r)}
    try:
        ci = makefile_packages(src)
        rep.check("Containerfile: build packages are all in Makefile.ci's DEBIAN_PACKAGES", build_pkgs <= ci,
                  f"not in Makefile.ci: {sorted(build_pkgs - ci)}")
        need = {p for p in ci if p.endswith("-dev") and p != "libcmocka-dev"} | \
               {"build-essential", "cmake", "pkg-config", "protobuf-c-compiler", "node-llhttp"}
        rep.check("Containerfile: build stage has every library and build tool of Makefile.ci", need <= build_pkgs,
                  f"missing {sorted(need - build_pkgs)}")
    except Failed as e:
        rep.check("Containerfile: build packages against Makefile.ci", False, str(e))
    rep.check("Containerfile: no -dev package or compiler in the runtime stage",
              not any(p.endswith("-dev") or p in ("build-essential", "gcc", "cmake") for p in run_pkgs), str(sorted(run_pkgs)))
    def apt_knows(p):
        r = subprocess.run(["apt-cache", "show", "--no-all-versions", p], capture_output=True, text=True)
        return r.returncode == 0 and "Package:" in r.stdout
    # One apt-cache for every name (each call loads the package cache, ~0.7 s):
    # a name passes when a stanza "Package: <name>" came back; any other name
    # is asked alone as before (the batch's status says nothing per name).
    asked = sorted(run_pkgs | build_pkgs | {"libc6"})
    shown = set()
    if shutil.which("apt-cache"):
        r = subprocess.run(["apt-cache", "show", "--no-all-versions", *asked], capture_output=True, text=True)
        shown = set(re.findall(r"^Package: (\S+)$", r.stdout, re.M))
    def apt_has(p):
        return p in shown or apt_knows(p)
    if not shutil.which("apt-cache") or not apt_has("libc6"):
        rep.skip("Debian package names", "no apt-cache or no package lists (apt-get update)")
    else:
        for p in sorted(run_pkgs | build_pkgs):
            rep.check(f"Debian package {p} exists (apt-cache show)", apt_has(p))
    if shutil.which("ldd") and shutil.which("dpkg") and shutil.which("readelf"):
        # The libraries each program names itself (DT_NEEDED); apt brings
        # their own dependencies along.
        libs_pkgs, unknown = set(), []
        for b in (MASTER, WORKER, "loadctl"):
            path = os.path.join(bindir, b)
            needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]",
                                    subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout))
            r = subprocess.run(["ldd", path], capture_output=True, text=True)
            for m in re.finditer(r"^\s*(\S+)\s+=>\s+(/\S+)", r.stdout, re.M):
                if m.group(1) not in needed:
                    continue
                lib = m.group(2)
                d = subprocess.run(["dpkg", "-S", os.path.realpath(lib)], capture_output=True, text=True)
                if d.returncode != 0:
                    d = subprocess.run(["dpkg", "-S", lib], capture_output=True, text=True)
                if d.returncode != 0:
                    unknown.append(lib)
                    continue
                libs_pkgs.add(d.stdout.split(":")[0].strip())
        # In debian:12 already (libc6, libgcc-s1), or sanitizer runtimes of an ASan build.
        ignore = re.compile(r"(libc6|libgcc-s1|libasan\d*|libubsan\d*|liblsan\d*|libtsan\d*|libstdc\+\+6)")
        missing = sorted(p for p in libs_pkgs if not ignore.fullmatch(p) and p not in run_pkgs)
        rep.check(f"Containerfile: runtime packages provide every library the programs link ({len(libs_pkgs)} packages)",
                  not missing, f"missing {missing}" + (f"; no package for {unknown}" if unknown else ""))
    else:
        rep.skip("runtime libraries", "no ldd, readelf or dpkg")
    return bins


def cmd_check(args):
    rep = Report()
    src, bindir = os.path.abspath(args.src), os.path.abspath(args.bin)
    helps = {}

    def help_of(prog):
        if prog not in helps:
            r = subprocess.run([os.path.join(bindir, prog), "--help"], capture_output=True, text=True, timeout=20)
            helps[prog] = r.stdout + r.stderr
            rep.check(f"{prog} --help runs", r.returncode == 0 and "--" in helps[prog], f"exit {r.returncode}")
        return helps[prog]

    objs_by_dir = {}
    check_files(rep, src, objs_by_dir)
    check_kubectl(rep, src, objs_by_dir)
    objs = objs_by_dir.get(BASE)
    if objs is None:
        rep.check("deploy/k8s/base builds", False)
        return finish(rep)
    secrets_known = {s["metadata"]["name"]: secret_data(s) for s in by_kind(objs, "Secret")}
    try:
        for s in load_yaml_docs(os.path.join(src, SECRET_EXAMPLE)):
            if s.get("kind") == "Secret":
                secrets_known.setdefault(s["metadata"]["name"], secret_data(s))
    except (OSError, yaml.YAMLError) as e:
        rep.check("secret.example.yaml readable", False, str(e))
    image_bins = check_containerfile(rep, src, bindir, objs)
    for what, fn in (("workloads and services", lambda: check_workloads(rep, objs, secrets_known, image_bins, help_of)),
                     ("secret example", lambda: check_secret_example(rep, src, secrets_known))):
        try:
            fn()
        except (Failed, KeyError, TypeError) as e:
            rep.check(what, False, f"{type(e).__name__}: {e}")
    try:
        info = check_master(rep, src, bindir, objs, secrets_known)
        if info:
            check_worker(rep, objs, secrets_known, info)
    except (Failed, KeyError, TypeError) as e:
        rep.check("masters and workers", False, f"{type(e).__name__}: {e}")
    return finish(rep)


def finish(rep):
    print(f"check_k8s: {rep.passed} passed, {rep.failed} failed")
    return 1 if rep.failed else 0


# ---------------------------------------------------------------- materialize


def cmd_materialize(args):
    """Writes each pod's mounted files under OUT/<pod>/ and prints the plan."""
    src, out = os.path.abspath(args.src), os.path.abspath(args.out)
    ports = [int(p) for p in args.ports.split(",") if p]
    objs = build_objects(os.path.join(src, BASE))
    secrets_known = {}
    for s in load_yaml_docs(os.path.join(src, SECRET_EXAMPLE)):
        if s.get("kind") == "Secret":
            secrets_known[s["metadata"]["name"]] = secret_data(s)
    # Real values for the example's placeholders (what secret.example.yaml says to generate).
    token = "lct_" + secrets.token_urlsafe(32)
    values = {"admin-token": token + "\n", "join-secret": secrets.token_urlsafe(48) + "\n"}
    for data in secrets_known.values():
        for k in data:
            data[k] = values.get(k, secrets.token_urlsafe(24))

    master = named(objs, "StatefulSet", MASTER)
    mc = main_container(master)
    conf_path = flag_value(expand_args(mc), "--cluster")
    files, _ = volume_files(master, objs, secrets_known)
    nodes = parse_nodes_conf(files[conf_path][3])
    addr_map = {}  # "name:port" of nodes.conf -> "localhost:free port"
    node_ports = {}  # id -> {container port: local port}
    for node_id, addrs in nodes:
        node_ports[node_id] = {}
        for kind in ("raft", "worker", "api"):
            host, port = addrs[kind]
            local = ports.pop(0)
            addr_map[f"{host}:{port}"] = f"localhost:{local}"
            node_ports[node_id][port] = local

    def rewrite_conf(text):
        lines = []
        for line in text.split("\n"):
            body, hash_, comment = line.partition("#")
            if not body.strip():
                lines.append(line)
                continue
            lines.append(" ".join(addr_map.get(f, f) for f in body.split()) + (" #" + comment if hash_ else ""))
        return "\n".join(lines)

    def pod(workload, ordinal):
        c = main_container(workload)
        name = f"{workload['metadata']['name']}-{ordinal}"
        root = os.path.join(out, name)
        files, dirs = volume_files(workload, objs, secrets_known)
        mounts = sorted(set(dirs) | {os.path.dirname(p) for p in files}, key=len, reverse=True)
        for d in dirs:
            os.makedirs(root + d, exist_ok=True)
        for path, (kind, _, key, content) in files.items():
            os.makedirs(os.path.dirname(root + path), exist_ok=True)
            if key == "nodes.conf":
                content = rewrite_conf(content)
            fd = os.open(root + path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(content)
        port_map = dict(node_ports.get(id_from_hostname(name), {}))
        argv = []
        for a in expand_args(c):
            for mp in mounts:
                if a == mp or a.startswith(mp + "/"):
                    a = root + a
                    break
            m = re.fullmatch(r"(0\.0\.0\.0|\[::\]):(\d+)", a)
            if m:
                local = ports.pop(0)
                port_map[int(m.group(2))] = local
                a = f"127.0.0.1:{local}"
            elif "," in a or a in addr_map:
                a = ",".join(addr_map.get(x, x) for x in a.split(","))
            argv.append(a)
        probes = {}
        for probe in ("readinessProbe", "livenessProbe"):
            hg = (c.get(probe) or {}).get("httpGet")
            if hg:
                cport = container_port(c, hg["port"])
                probes[probe] = f"http://127.0.0.1:{port_map.get(cport)}{hg.get('path', '/')}"
        ann = workload["spec"]["template"].get("metadata", {}).get("annotations") or {}
        metrics = None
        if ann.get("prometheus.io/scrape") == "true":
            metrics = f"http://127.0.0.1:{port_map.get(int(ann.get('prometheus.io/port', 0)))}{ann.get('prometheus.io/path', '/metrics')}"
        api = None
        if name.startswith(MASTER):
            api_port = dict(nodes)[id_from_hostname(name)]["api"][1]
            api = f"http://127.0.0.1:{port_map[api_port]}"
        return {"name": name, "hostname": name, "binary": (c.get("command") or [None])[0], "args": argv,
                "probes": probes, "metrics": metrics, "api": api, "id": id_from_hostname(name),
                "grace": pod_spec(workload).get("terminationGracePeriodSeconds", 30)}

    plan = {"admin_token": token,
            "masters": [pod(master, i) for i in range(master["spec"].get("replicas", 1))],
            "workers": [pod(named(objs, "StatefulSet", WORKER), 0)]}
    json.dump(plan, sys.stdout, indent=1)
    print()
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("--src", required=True)
    c.add_argument("--bin", required=True)
    m = sub.add_parser("materialize")
    m.add_argument("--src", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--ports", required=True, help="comma-separated free TCP ports (12)")
    a = ap.parse_args()
    return cmd_check(a) if a.cmd == "check" else cmd_materialize(a)


if __name__ == "__main__":
    sys.exit(main())
