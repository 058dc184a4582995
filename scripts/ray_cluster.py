#!/usr/bin/env python3
"""Run a bao-zero fleet on Ray: `bao selfplay` workers and one `bao learn` trainer.

Ray only places, watches and restarts processes; all data goes through the run's root in
object storage (a directory every node sees, s3://, gs://, az://), so the same command lines
also run under Slurm or Kubernetes (see examples/).

    ray_cluster.py local-up --nodes 2 [--state DIR]      # a cluster on loopback addresses
    ray_cluster.py run --address 127.0.0.2:6390 --root ROOT --workers 4 \
        [--config RUN.toml] [--worker-gpus 0.25] [--trainer-gpus 1] [--bao PATH]
    ray_cluster.py down [--state DIR]                    # stops what local-up started

`run` starts the trainer (`bao learn --data ROOT`) as one actor and K workers
(`bao selfplay --model ROOT/models/LATEST --out ROOT`) as actors with the requested CPUs/GPUs
(fractions allowed: Ray sets CUDA_VISIBLE_DEVICES). A process that dies is started again
(the trainer resumes from ROOT/trainer/, a worker continues its shard numbering) up to
--max-restarts times each. When the trainer has published its last generation the workers see
LATEST marked finished and exit; `run` then returns 0. It stops only the actors it created.

Ray 2.60 turns on token authentication: every process of a cluster needs the same
RAY_AUTH_MODE=token and RAY_AUTH_TOKEN. `local-up` makes a token and saves it in its state
directory; `run --state DIR` and `down --state DIR` read it from there.
"""

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import uuid

RAY_VERSION = "2.60.0"
DEFAULT_STATE = os.path.join(os.environ.get("TMPDIR", "/tmp"), "bao-ray-local")


def log(msg):
    print(f"[ray_cluster {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ray_env(token):
    env = dict(os.environ)
    env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0"})
    return env


def ray_bin():
    # The `ray` script installed beside this Python (the project venv), else on PATH.
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    return here if os.path.exists(here) else (shutil.which("ray") or "ray")


# ---------------------------------------------------------------------------------------------
# local-up / down: a cluster of N nodes on this machine, on 127.0.0.2, 127.0.0.3, ...
# (Ray rewrites 127.0.0.1 to the machine's address but leaves other loopback addresses alone.)


def local_up(args):
    state = os.path.abspath(args.state)
    if os.path.exists(os.path.join(state, "cluster.json")):
        sys.exit(f"{state}/cluster.json exists: a local cluster is up (run `down --state {state}` first)")
    os.makedirs(state, exist_ok=True)
    token = secrets.token_hex(32)
    env = ray_env(token)
    address = f"{args.head_ip}:{args.port}"
    base = args.head_ip.rsplit(".", 1)
    nodes = []
    info = {"address": address, "token": token, "nodes": nodes, "state": state}

    def save():
        with open(os.path.join(state, "cluster.json.tmp"), "w") as f:
            json.dump(info, f, indent=2)
        os.replace(os.path.join(state, "cluster.json.tmp"), os.path.join(state, "cluster.json"))

    for i in range(args.nodes):
        ip = f"{base[0]}.{int(base[1]) + i}"
        cmd = [ray_bin(), "start", "--block", "--node-ip-address", ip, "--num-cpus", str(args.cpus_per_node),
               "--object-store-memory", str(args.object_store_mb * 1024 * 1024), "--disable-usage-stats"]
        if args.gpus_per_node is not None:
            cmd += ["--num-gpus", str(args.gpus_per_node)]
        if i == 0:
            cmd += ["--head", "--port", str(args.port), "--include-dashboard", "false",
                    "--temp-dir", os.path.join(state, "ray")]
        else:
            cmd += ["--address", address]
        out = open(os.path.join(state, f"node{i}.log"), "w")
        # Its own session: `down` stops the whole process group and nothing else.
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        nodes.append({"ip": ip, "pid": p.pid, "pgid": p.pid})
        save()
        log(f"node {i} starting on {ip} (pid {p.pid})")
        if i == 0:
            wait_for_nodes(address, token, 1, args.timeout, state)
    wait_for_nodes(address, token, args.nodes, args.timeout, state)
    print(address)


def wait_for_nodes(address, token, n, timeout, state):
    code = (
        "import ray,sys; ray.init(address=sys.argv[1], logging_level='ERROR');"
        "print(sum(1 for x in ray.nodes() if x['Alive']))"
    )
    deadline = time.time() + timeout
    last = ""
    while time.time() < deadline:
        r = subprocess.run([sys.executable, "-c", code, address], env=ray_env(token), capture_output=True, text=True)
        last = (r.stdout + r.stderr).strip()
        if r.returncode == 0 and r.stdout.strip().isdigit() and int(r.stdout.strip()) >= n:
            log(f"{n} node(s) up at {address}")
            return
        time.sleep(2)
    sys.exit(f"the cluster at {address} did not reach {n} nodes in {timeout}s; logs in {state}; last: {last[-500:]}")


def down(args):
    state = os.path.abspath(args.state)
    path = os.path.join(state, "cluster.json")
    if not os.path.exists(path):
        log(f"no local cluster recorded in {state}")
        return
    with open(path) as f:
        info = json.load(f)
    groups = [n["pgid"] for n in reversed(info["nodes"])]
    for sig, wait in ((signal.SIGTERM, args.grace), (signal.SIGKILL, 5)):
        for g in groups:
            try:
                os.killpg(g, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + wait
        while time.time() < deadline and any(group_alive(g) for g in groups):
            time.sleep(0.5)
        if not any(group_alive(g) for g in groups):
            break
    left = [g for g in groups if group_alive(g)]
    if left:
        sys.exit(f"process groups {left} did not stop")
    os.remove(path)
    log(f"local cluster in {state} stopped")


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


# ---------------------------------------------------------------------------------------------
# run: the fleet as Ray actors.


def die_with_parent():
    """In the child before exec: get SIGKILL when the actor process dies, so a killed actor
    never leaves a `bao` process behind (Linux)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def make_actor_class(ray):
    @ray.remote(max_restarts=-1, max_task_retries=0)
    class BaoProcess:
        """Runs one `bao` command line to its end; Ray restarts the actor if its process dies."""

        def __init__(self, name, argv, cpus):
            self.name = name
            self.argv = argv
            self.proc = None
            # rayon (self-play's thread pool) would use every core of the node; keep to the
            # CPUs Ray granted, as Ray does for OMP_NUM_THREADS.
            self.env = dict(os.environ)
            self.env.setdefault("RAYON_NUM_THREADS", str(max(1, int(cpus))))

        def run(self):
            log_path = os.environ.get("BAO_RAY_LOG_DIR")
            out = open(os.path.join(log_path, f"{self.name}.log"), "a") if log_path else None
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT if out else None,
                                         preexec_fn=die_with_parent, env=self.env)
            rc = self.proc.wait()
            return {"name": self.name, "rc": rc, "pid": self.proc.pid, "node": ray.util.get_node_ip_address()}

        def stop(self):
            if self.proc and self.proc.poll() is None:
                self.proc.terminate()
            return True

    return BaoProcess


def run(args):
    token = args.token or os.environ.get("RAY_AUTH_TOKEN")
    if args.state and not token:
        with open(os.path.join(os.path.abspath(args.state), "cluster.json")) as f:
            token = json.load(f)["token"]
    if token:
        os.environ.update(ray_env(token))
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    import ray  # after the environment: Ray reads its auth settings at import

    bao = os.path.abspath(args.bao) if os.path.sep in args.bao else (shutil.which(args.bao) or args.bao)
    runtime_env = {"env_vars": {k: v for k, v in os.environ.items()
                                if k.startswith(("AWS_", "GOOGLE_", "AZURE_", "BAO_", "RUST_LOG"))}}
    if args.log_dir:
        os.makedirs(args.log_dir, exist_ok=True)
        runtime_env["env_vars"]["BAO_RAY_LOG_DIR"] = os.path.abspath(args.log_dir)
    ray.init(address=args.address, logging_level="WARNING", runtime_env=runtime_env, log_to_driver=args.verbose)
    BaoProcess = make_actor_class(ray)
    nonce = uuid.uuid4().hex[:8]

    trainer_argv = [bao, "learn", "--data", args.root, "--trainer-id", f"ray-trainer-{nonce}", "--quiet"]
    if args.config:
        trainer_argv += ["--config", os.path.abspath(args.config)]
    if args.generations is not None:
        trainer_argv += ["--generations", str(args.generations)]
    trainer_argv += args.trainer_arg
    model = args.root.rstrip("/") + "/models/LATEST"

    def worker_argv(i):
        return [bao, "selfplay", "--model", model, "--out", args.root, "--worker-id", f"ray-{nonce}-w{i}",
                "--quiet"] + args.worker_arg

    actors = {}   # name -> (actor handle, argv)
    running = {}  # object ref -> name
    restarts = {}

    def launch(name, opts, argv):
        if name not in actors:
            actors[name] = BaoProcess.options(**opts).remote(name, argv, opts.get("num_cpus", 1))
        running[actors[name].run.remote()] = name
        log(f"started {name}: {' '.join(argv)}")

    res = json.loads(args.worker_resources) if args.worker_resources else None
    worker_opts = {"num_cpus": args.worker_cpus, "num_gpus": args.worker_gpus}
    if res:
        worker_opts["resources"] = res
    launch("trainer", {"num_cpus": args.trainer_cpus, "num_gpus": args.trainer_gpus}, trainer_argv)
    for i in range(args.workers):
        launch(f"worker{i}", worker_opts, worker_argv(i))

    deadline = time.time() + args.timeout if args.timeout else None
    trainer_done = None
    status = 0
    while running:
        if deadline and time.time() > deadline:
            log(f"timeout after {args.timeout}s")
            status = 3
            break
        if trainer_done and time.time() > trainer_done + args.grace:
            log("workers still running after the trainer finished; stopping them")
            break
        ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
        for ref in ready:
            name = running.pop(ref)
            try:
                r = ray.get(ref)
                rc, where = r["rc"], f"pid {r['pid']} on {r['node']}"
            except ray.exceptions.RayActorError as e:
                rc, where = None, f"actor died: {type(e).__name__}"
            log(f"{name} ended ({where}) with status {rc}")
            if rc == 0:
                if name == "trainer":
                    trainer_done = time.time()
                continue
            restarts[name] = restarts.get(name, 0) + 1
            if restarts[name] > args.max_restarts:
                log(f"{name} failed {restarts[name]} times; giving up")
                status = 2
                running.clear()
                break
            time.sleep(min(2 ** restarts[name], 30) * 0.5)
            argv = trainer_argv if name == "trainer" else worker_argv(int(name[len("worker"):]))
            launch(name, {}, argv)
    for name, (handle) in actors.items():
        ray.kill(handle, no_restart=True)
    log(f"fleet stopped; restarts: {restarts or 'none'}")
    print(json.dumps({"status": status, "restarts": restarts, "trainer_finished": trainer_done is not None}))
    sys.exit(status if trainer_done or status else 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    up = sub.add_parser("local-up", help="start a Ray cluster of N nodes on loopback addresses")
    up.add_argument("--nodes", type=int, default=2)
    up.add_argument("--state", default=DEFAULT_STATE, help="directory for the token, pids and logs")
    up.add_argument("--head-ip", default="127.0.0.2")
    up.add_argument("--port", type=int, default=6390)
    up.add_argument("--cpus-per-node", type=int, default=2, help="logical CPUs each node offers")
    up.add_argument("--gpus-per-node", type=float)
    up.add_argument("--object-store-mb", type=int, default=100, help="bao keeps no data in Ray's object store")
    up.add_argument("--timeout", type=int, default=120)

    r = sub.add_parser("run", help="run a fleet on a Ray cluster")
    r.add_argument("--address", required=True, help="Ray address, e.g. 127.0.0.2:6390")
    r.add_argument("--root", required=True, help="the run's root: a shared directory or s3://, gs://, az:// URL")
    r.add_argument("--workers", type=int, required=True)
    r.add_argument("--config", help="run config for a new run (becomes ROOT/run.toml)")
    r.add_argument("--generations", type=int, help="stop after this generation")
    r.add_argument("--worker-cpus", type=float, default=1.0)
    r.add_argument("--worker-gpus", type=float, default=0.0)
    r.add_argument("--worker-resources", help='custom Ray resources per worker, JSON, e.g. \'{"selfplay": 1}\'')
    r.add_argument("--trainer-cpus", type=float, default=1.0)
    r.add_argument("--trainer-gpus", type=float, default=0.0)
    r.add_argument("--worker-arg", action="append", default=[], help="extra argument for `bao selfplay` (repeat)")
    r.add_argument("--trainer-arg", action="append", default=[], help="extra argument for `bao learn` (repeat)")
    r.add_argument("--bao", default="bao", help="the bao binary (same path on every node)")
    r.add_argument("--max-restarts", type=int, default=10, help="per process")
    r.add_argument("--grace", type=float, default=120, help="seconds workers get to finish after the trainer")
    r.add_argument("--timeout", type=float, help="give up after this many seconds (exit 3)")
    r.add_argument("--state", help="local-up's state directory (for the token)")
    r.add_argument("--token", help="RAY_AUTH_TOKEN (default: environment or --state)")
    r.add_argument("--log-dir", help="directory (on each node) for the bao processes' output")
    r.add_argument("--verbose", action="store_true", help="forward actor output to this terminal")

    d = sub.add_parser("down", help="stop a local cluster started by local-up")
    d.add_argument("--state", default=DEFAULT_STATE)
    d.add_argument("--grace", type=float, default=20)

    args = p.parse_args()
    {"local-up": local_up, "run": run, "down": down}[args.cmd](args)


if __name__ == "__main__":
    main()
