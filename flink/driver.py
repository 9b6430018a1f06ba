"""Runs a rewritten joinlab script on a Flink cluster (the lab's `--engine flink`).

The lab writes a job file (JSON) and calls this script with the project's
PyFlink virtualenv:

    python driver.py JOB.json

JOB.json: {"rest": "HOST:PORT", "jars": ["file:///..."], "config": {key: value},
           "statements": [{"kind": "set"|"sql"|"insert"|"explain", "sql": ...,
                           "key": ..., "value": ..., "sink": ...}, ...]}

Each statement runs in order, as `lab run` does: "set" changes the
configuration of the statements after it, "sql" is DDL, "explain" prints
Flink's plan, and each "insert" is its own job, waited for before the next.
The driver prints one JSON object per line on stdout:

    {"event": "submitted", "statement": i, "sink": ..., "job_id": ...}
    {"event": "finished", "statement": i, "sink": ..., "job_id": ...}
    {"event": "explain", "statement": i, "text": ...}
    {"event": "error", "statement": i, "phase": "submit"|"run", "message": ...}
                                                         (then exit code 3)

A statement Flink rejects ("submit") or a job that fails ("run") is
reported with Flink's own message.
"""

import json
import sys


def emit(**event):
    print(json.dumps(event), flush=True)


def flink_message(exc):
    """Flink's own message: the Java exception's text without the stack trace."""
    text = str(exc)
    # PyFlink appends the Java stack trace after the message.
    for marker in ("\n\tat ", "\n\t at "):
        cut = text.find(marker)
        if cut >= 0:
            text = text[:cut]
    return text.strip()


def main():
    if len(sys.argv) != 2:
        print("usage: driver.py JOB.json", file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
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
                job_id = str(result.get_job_client().get_job_id())
                emit(event="submitted", statement=i, sink=stmt["sink"], job_id=job_id)
                phase = "run"
                result.wait()
                emit(event="finished", statement=i, sink=stmt["sink"], job_id=job_id)
            else:
                raise ValueError("unknown statement kind " + repr(kind))
        except Exception as exc:  # Flink's exceptions arrive as Py4J/PyFlink errors
            emit(event="error", statement=i, phase=phase, message=flink_message(exc))
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
