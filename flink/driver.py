"""Runs a rewritten joinlab script on a Flink cluster (the lab's `--engine flink`).

The lab writes a job file (JSON) and calls this script with the project's
PyFlink virtualenv:

    python driver.py JOB.json       one job file, then exit
    python driver.py --serve        job file paths on stdin, one per line

JOB.json: {"rest": "HOST:PORT", "jars": ["file:///..."], "config": {key: value},
           "statements": [{"kind": "set"|"sql"|"insert"|"statement_set"|"explain",
                           "sql": ..., "key": ..., "value": ..., "sink": ...,
                           "inserts": [{"sql": ..., "sink": ...}, ...]}, ...]}

Each statement runs in order, as `lab run` does: "set" changes the
configuration of the statements after it, "sql" is DDL, "explain" prints
Flink's plan (its text is a whole EXPLAIN statement), each "insert" is its
own job and each "statement_set" one job for all its INSERTs (Flink's
StatementSet), waited for before the next statement. Each job file gets a
TableEnvironment of its own; `--serve` keeps one Java gateway for all of
them (starting it is most of a small job's time). The driver prints one
JSON object per line on stdout:

    {"event": "submitted", "statement": i, "sinks": [...], "job_id": ...}
    {"event": "finished", "statement": i, "sinks": [...], "job_id": ...}
    {"event": "explain", "statement": i, "text": ...}
    {"event": "error", "statement": i, "phase": "submit"|"run", "message": ...}
    {"event": "done", "status": 0|3}                     (the job file is done)

A statement Flink rejects ("submit") or a job that fails ("run") is
reported with Flink's own message and ends that job file (status 3; the
one-file form exits with code 3).
"""

import json
import sys


def emit(**event):
    print(json.dumps(event), flush=True)


def flink_message(exc):
    """Flink's own message: the Java exception's text without the stack
    trace, and the root cause (the last "Caused by:") when there is one."""
    full = str(exc)
    text = full
    # PyFlink appends the Java stack trace after the message.
    for marker in ("\n\tat ", "\n\t at "):
        cut = text.find(marker)
        if cut >= 0:
            text = text[:cut]
    text = text.strip()
    causes = [line.strip() for line in full.splitlines() if line.startswith("Caused by: ")]
    if causes and causes[-1] not in text:
        text += "\nroot cause: " + causes[-1][len("Caused by: "):]
    return text


def run_job(path):
    """Runs one job file; returns 0, or 3 after an error event."""
    with open(path, encoding="utf-8") as f:
        job = json.load(f)
    host, _, port = job["rest"].rpartition(":")

    from pyflink.table import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    config = t_env.get_config()
    config.set("execution.target", "remote")
    config.set("rest.address", host)
    config.set("rest.port", port)
    if job.get("jars"):
        config.set("pipeline.jars", ";".join(job["jars"]))
    for key, value in job.get("config", {}).items():
        config.set(key, value)

    def run_and_wait(i, sinks, result):
        job_id = str(result.get_job_client().get_job_id())
        emit(event="submitted", statement=i, sinks=sinks, job_id=job_id)
        result.wait()
        emit(event="finished", statement=i, sinks=sinks, job_id=job_id)

    for i, stmt in enumerate(job["statements"]):
        kind = stmt["kind"]
        phase = "submit"
        try:
            if kind == "set":
                config.set(stmt["key"], stmt["value"])
            elif kind == "sql":
                t_env.execute_sql(stmt["sql"])
            elif kind == "explain":
                rows = t_env.execute_sql(stmt["sql"]).collect()
                with rows:
                    text = "\n".join(str(r[0]) for r in rows)
                emit(event="explain", statement=i, text=text)
            elif kind == "insert":
                config.set("pipeline.name", "joinlab " + stmt["sink"])
                result = t_env.execute_sql(stmt["sql"])
                phase = "run"
                run_and_wait(i, [stmt["sink"]], result)
            elif kind == "statement_set":
                sinks = [ins["sink"] for ins in stmt["inserts"]]
                config.set("pipeline.name", "joinlab " + ", ".join(sinks))
                statement_set = t_env.create_statement_set()
                for ins in stmt["inserts"]:
                    statement_set.add_insert_sql(ins["sql"])
                result = statement_set.execute()
                phase = "run"
                run_and_wait(i, sinks, result)
            else:
                raise ValueError("unknown statement kind " + repr(kind))
        except Exception as exc:  # Flink's exceptions arrive as Py4J/PyFlink errors
            emit(event="error", statement=i, phase=phase, message=flink_message(exc))
            return 3
    return 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--serve":
        for line in sys.stdin:
            path = line.strip()
            if not path:
                continue
            try:
                status = run_job(path)
            except Exception as exc:  # an unreadable job file, a gateway that died
                emit(event="error", statement=-1, phase="submit", message=flink_message(exc))
                status = 3
            emit(event="done", status=status)
        return 0
    if len(sys.argv) != 2:
        print("usage: driver.py JOB.json | driver.py --serve", file=sys.stderr)
        return 2
    status = run_job(sys.argv[1])
    emit(event="done", status=status)
    return status


if __name__ == "__main__":
    sys.exit(main())
