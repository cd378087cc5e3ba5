#!/usr/bin/env python3
"""Measure what a real Flink restore does for each labelled change pair.

For every pair of a pairs file (default tests/data/upgrade/pairs.json, or the names given):

1. opens a SQL Gateway session, creates the sources, the sink(s), runs the pair's `old` statement,
   waits until the job has run MIN_RUN seconds with at least one completed checkpoint;
2. `STOP JOB '<id>' WITH SAVEPOINT`;
3. in a fresh session sets `execution.state-recovery.path` to the savepoint (no
   allowNonRestoredState), creates the same tables and submits the `new` statement;
4. watches the new job for WATCH seconds and records:
   - `restored`: RUNNING, no exception in /jobs/<id>/exceptions, and /jobs/<id>/checkpoints
     `latest.restored` is the savepoint;
   - `failed`: the job failed or restarted with an exception (the root cause class is noted,
     e.g. StateMigrationException);
   - `rejected`: the submission was refused, or the job could not map the savepoint's state
     (`Cannot map checkpoint/savepoint state …`).

It always cancels every job it started and deletes the savepoint folders it made (when they are
local paths). It prints a table; `--write` stores each measured `restore` back into the file.

Uses only the Python 3 standard library: the SQL Gateway REST API v2 (default
http://127.0.0.1:8083) and the JobManager REST API (default http://127.0.0.1:8081). The stack is
shared: run it under the stack lock, e.g.

    flock /tmp/flinkpipe-stack.lock python3 scripts/measure-upgrade-pairs.py agg_alias win_size

or `--lock /tmp/flinkpipe-stack.lock` to take the lock per pair (other users get the stack
between pairs). It never starts or stops the stack.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import sys
import time
import urllib.error
import urllib.request

GATEWAY = os.environ.get("FLINKPIPE_GATEWAY", "http://127.0.0.1:8083")
JOBMANAGER = os.environ.get("FLINKPIPE_JOBMANAGER", "http://127.0.0.1:8081")


class Refused(Exception):
    """A statement the gateway answered with ERROR; the text is its root cause."""


def http(method, url, body=None, timeout=60):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw else {})
    except urllib.error.HTTPError as e:
        raw = e.read()
        try:
            return e.code, json.loads(raw)
        except ValueError:
            return e.code, {"errors": [raw.decode(errors="replace")]}


def root_cause(text):
    """The last `Caused by:` line of a Java stack trace (or its first line)."""
    causes = re.findall(r"Caused by: ([^\n]+)", text)
    line = causes[-1] if causes else text.strip().splitlines()[0] if text.strip() else ""
    return line.strip()[:300]


def cause_class(line):
    m = re.match(r"([\w.$]+)(:|$)", line)
    return m.group(1).rsplit(".", 1)[-1] if m else line[:80]


class Session:
    def __init__(self, name):
        st, body = http("POST", f"{GATEWAY}/v2/sessions", {"sessionName": name})
        if st != 200:
            raise RuntimeError(f"open session: {st} {body}")
        self.handle = body["sessionHandle"]

    def close(self):
        http("DELETE", f"{GATEWAY}/v2/sessions/{self.handle}")

    def execute(self, statement, timeout=120):
        """Runs one statement and returns its result rows (lists of fields)."""
        base = f"{GATEWAY}/v2/sessions/{self.handle}"
        st, body = http("POST", f"{base}/statements", {"statement": statement})
        if st != 200:
            raise Refused(root_cause("\n".join(body.get("errors", [str(body)]))))
        op = body["operationHandle"]
        uri = f"/v2/sessions/{self.handle}/operations/{op}/result/0?rowFormat=JSON"
        rows, job = [], None
        deadline = time.time() + timeout
        while uri:
            st, page = http("GET", f"{GATEWAY}{uri}")
            if st != 200:
                raise Refused(root_cause("\n".join(page.get("errors", [str(page)]))))
            if page.get("resultType") == "NOT_READY":
                if time.time() > deadline:
                    raise RuntimeError(f"statement timed out: {statement[:80]}")
                time.sleep(0.3)
            else:
                job = page.get("jobID") or job
                rows += [r["fields"] for r in page.get("results", {}).get("data", [])]
                if page.get("resultType") == "EOS":
                    break
            uri = page.get("nextResultUri")
        http("DELETE", f"{base}/operations/{op}/close")
        return rows, job


def job_state(jid):
    st, body = http("GET", f"{JOBMANAGER}/jobs/{jid}")
    return body.get("state") if st == 200 else None


def tasks_running(jid):
    """Whether every vertex of the job runs (a RUNNING job may still deploy its tasks)."""
    st, body = http("GET", f"{JOBMANAGER}/jobs/{jid}")
    vertices = body.get("vertices", []) if st == 200 else []
    return bool(vertices) and all(v.get("status") == "RUNNING" for v in vertices)


def job_checkpoints(jid):
    st, body = http("GET", f"{JOBMANAGER}/jobs/{jid}/checkpoints")
    return body if st == 200 else {}


def job_exceptions(jid):
    """Root-cause lines of the job's exception history (newest first)."""
    st, body = http("GET", f"{JOBMANAGER}/jobs/{jid}/exceptions")
    if st != 200:
        return []
    out = []
    for e in body.get("exceptionHistory", {}).get("entries", []):
        out.append(root_cause(e.get("stacktrace") or e.get("exceptionName", "")))
    if not out and body.get("root-exception"):
        out.append(root_cause(body["root-exception"]))
    return out


def cancel(jid):
    if job_state(jid) in ("RUNNING", "RESTARTING", "CREATED", "INITIALIZING", "FAILING"):
        http("PATCH", f"{JOBMANAGER}/jobs/{jid}?mode=cancel")
        for _ in range(60):
            if job_state(jid) in ("CANCELED", "FAILED", "FINISHED", None):
                break
            time.sleep(0.5)


def local_path(uri):
    if uri and uri.startswith("file:"):
        p = uri[len("file:"):]
        while p.startswith("//"):
            p = p[1:]
        return p
    return None


def ddls(pairs_file, pair):
    out = list(pairs_file["sources"]) + [pair["sink_ddl"]]
    if "fct_out2" in pair["old"] or "fct_out2" in pair["new"]:
        out.append(pairs_file["second_sink"])
    return out


def measure(pairs_file, pair, min_run, watch, log):
    """Returns (restore, note)."""
    started, savepoint, sessions = [], None, []
    try:
        s1 = Session(f"measure-{pair['name']}-old")
        sessions.append(s1)
        for d in ddls(pairs_file, pair):
            s1.execute(d)
        s1.execute(f"SET 'pipeline.name' = 'measure-{pair['name']}-old'")
        try:
            _, old_job = s1.execute(pair["old"])
        except Refused as e:
            return "error", f"old statement refused: {e}"
        started.append(old_job)
        log(f"  old job {old_job}")
        t0 = time.time()
        while True:
            state = job_state(old_job)
            done = job_checkpoints(old_job).get("counts", {}).get("completed", 0)
            if state not in ("RUNNING", "CREATED", "INITIALIZING"):
                return "error", f"old job {state}: {'; '.join(job_exceptions(old_job)[:1])}"
            if time.time() - t0 >= min_run and done >= 1 and state == "RUNNING":
                break
            if time.time() - t0 > min_run + 90:
                return "error", "old job made no checkpoint"
            time.sleep(1)
        rows, _ = s1.execute(f"STOP JOB '{old_job}' WITH SAVEPOINT", timeout=180)
        savepoint = rows[0][0]
        log(f"  savepoint {savepoint}")
        s2 = Session(f"measure-{pair['name']}-new")
        sessions.append(s2)
        for d in ddls(pairs_file, pair):
            s2.execute(d)
        s2.execute(f"SET 'execution.state-recovery.path' = '{savepoint}'")
        s2.execute(f"SET 'pipeline.name' = 'measure-{pair['name']}-new'")
        try:
            _, new_job = s2.execute(pair["new"])
        except Refused as e:
            return "rejected", str(e)
        started.append(new_job)
        log(f"  new job {new_job}")
        t0 = time.time()
        while True:
            state = job_state(new_job)
            if state in ("FAILED", "CANCELED", "FINISHED"):
                break
            # Watched `watch` seconds, and until every task runs and a checkpoint completed after
            # the restore (every operator opened its state), at most 60 s more.
            settled = tasks_running(new_job) and job_checkpoints(new_job).get("counts", {}).get("completed", 0) >= 1
            if time.time() - t0 >= watch and (settled or time.time() - t0 >= watch + 60):
                break
            time.sleep(1)
        state = job_state(new_job)
        if state == "RUNNING" and not tasks_running(new_job) and not job_exceptions(new_job):
            return "error", "the new job's tasks did not all reach RUNNING"
        if state == "RUNNING" and not job_exceptions(new_job) and not job_checkpoints(new_job).get("counts", {}).get("completed", 0):
            return "error", "no checkpoint completed after the restore"

        exceptions = job_exceptions(new_job)
        restored = ((job_checkpoints(new_job).get("latest") or {}).get("restored") or {})
        if exceptions:
            cause = exceptions[-1]
            if re.search(r"Cannot map checkpoint/savepoint state|allowNonRestoredState", "\n".join(exceptions)):
                return "rejected", cause
            return "failed", f"{state}: {cause_class(cause)}: {cause}"
        if state != "RUNNING":
            return "failed", f"{state} without exception"
        if local_path(restored.get("external_path")) != local_path(savepoint) and (
            restored.get("external_path") or ""
        ).rstrip("/") != savepoint.rstrip("/"):
            return "failed", f"RUNNING but not restored from the savepoint ({restored})"
        return "restored", ""
    finally:
        for j in started:
            try:
                cancel(j)
            except Exception as e:  # noqa: BLE001 - keep cleaning up
                log(f"  could not cancel {j}: {e}")
        for s in sessions:
            try:
                s.close()
            except Exception:  # noqa: BLE001
                pass
        p = local_path(savepoint)
        if p and os.path.isdir(p):
            shutil.rmtree(p, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="pairs to measure (default: all)")
    ap.add_argument("--file", default=os.path.join(os.path.dirname(__file__), "..", "tests/data/upgrade/pairs.json"))
    ap.add_argument("--write", action="store_true", help="store each measured `restore` in the file")
    ap.add_argument("--min-run", type=float, default=10, help="seconds the old job runs (default 10)")
    ap.add_argument("--watch", type=float, default=15, help="seconds the new job is watched (default 15)")
    ap.add_argument("--lock", help="take this lock file around each pair (instead of an outer flock)")
    args = ap.parse_args()
    # A TERM (a timeout) still cancels the jobs started and removes the savepoints (`finally`).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with open(args.file) as f:
        data = json.load(f)
    pairs = [p for p in data["pairs"] if not args.names or p["name"] in args.names]
    missing = set(args.names) - {p["name"] for p in pairs}
    if missing:
        sys.exit(f"no such pair: {', '.join(sorted(missing))}")
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    results = []
    for p in pairs:
        log(f"{p['name']}:")
        lock = open(args.lock, "w") if args.lock else None
        if lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            restore, note = measure(data, p, args.min_run, args.watch, log)
        except Exception as e:  # noqa: BLE001 - one broken pair does not stop the others
            restore, note = "error", f"{type(e).__name__}: {e}"
        finally:
            if lock:
                lock.close()
        log(f"  → {restore} {note}")
        results.append((p, restore, note))
    w = max([len(p["name"]) for p, _, _ in results] + [4])
    print(f"{'pair':<{w}}  {'restore':<9} {'was':<9} {'verdict':<35} note")
    for p, restore, note in results:
        flag = "" if p.get("restore") in (None, restore) else " (CHANGED)"
        print(f"{p['name']:<{w}}  {restore:<9} {str(p.get('restore')):<9} {p.get('verdict', ''):<35} {note[:120]}{flag}")
    if args.write:
        for p, restore, note in results:
            if restore in ("restored", "failed", "rejected"):
                p["restore"] = restore
        with open(args.file, "w") as f:
            f.write(json.dumps(data, indent=1, ensure_ascii=False))
    return 1 if any(r == "error" for _, r, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
