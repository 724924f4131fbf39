"""incrc on Airflow: every interval, one task per pipeline of the project runs
`incrc run`, upstream pipelines first; the DAG incrc_backfill, triggered with a
pipeline and a date range, runs `incrc backfill`.

The tasks come from the project itself (`incrc validate --json`, read when
Airflow parses this file): a pipeline added to specs/ gets its task, and each
pipeline says whether `--until` applies. A pipeline with a time watermark runs
`--until {{ data_interval_end }}`, so that a rerun of an interval reads the
same window; one with an integer watermark (a monotonic id) reads up to the
largest id present, and refuses `--until`.

incrc exits 0 when it is done, 1 when a run failed, 2 when a backfill found a
rebuilt partition that does not match its source, and 3 when another run
holds the pipeline's lease (or another process the DuckDB file): 3 means
"retry later", and Airflow retries it; the others are final.
"""
import json
import os
import subprocess
from datetime import datetime, timedelta

from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG

# Where incrc and the project are on the workers: the repository with
# incrc.yaml, specs/ and sql/, and a target named in its incrc.yaml.
INCRC = os.environ.get("INCRC", "incrc")  # on the workers' PATH: go install ./cmd/incrc
PROJECT = os.environ.get("INCRC_PROJECT", "/opt/pipelines")
TARGET = os.environ.get("INCRC_TARGET", "prod")

EXIT_LOCKED = 3


def incrc(*args):
    """Runs incrc in the project. Exit 3 (locked) raises an error Airflow
    retries; any other failure fails the task at once."""
    proc = subprocess.run([INCRC, *args], cwd=PROJECT, capture_output=True, text=True)
    print(proc.stdout, end="")
    print(proc.stderr, end="")
    if proc.returncode == EXIT_LOCKED:
        raise AirflowException("incrc exit 3: another run holds the lease; retry later")
    if proc.returncode != 0:
        raise AirflowFailException(f"incrc exit {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def pipelines():
    """The project's pipelines, as incrc reads them: each with "pipeline",
    "until" (whether --until applies) and "upstream". A spec with an error
    fails the import, and Airflow shows the error."""
    proc = subprocess.run([INCRC, "validate", "--json"], cwd=PROJECT, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"incrc validate in {PROJECT} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
    return json.loads(proc.stdout)["valid"]


def run_args(pipeline):
    """The command line of one pipeline's run in an interval."""
    args = ["run", "--target", TARGET, pipeline["pipeline"]]
    if pipeline["until"]:
        # The window ends where the interval does: a rerun of an interval
        # reads the same window, and --until is never later than now.
        args += ["--until", "{{ data_interval_end }}"]
    return args


retries = {"retries": 6, "retry_delay": timedelta(minutes=5)}

with DAG(
    "incrc",
    schedule="@hourly",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args=retries,
) as runs:
    found = pipelines()
    tasks = {
        p["pipeline"]: PythonOperator(task_id=f"run_{p['pipeline']}", python_callable=incrc, op_args=run_args(p))
        for p in found
    }
    for p in found:
        for up in p["upstream"]:
            if up in tasks:
                tasks[up] >> tasks[p["pipeline"]]

def backfill(params, **_):
    """incrc backfill of the triggered range; with restate, partitions
    older than finalize_after are rebuilt too."""
    args = ["backfill", "--target", TARGET, params["pipeline"], "--from", params["from"], "--to", params["to"]]
    if params.get("restate"):
        args.append("--restate")
    return incrc(*args)


with DAG(
    "incrc_backfill",
    schedule=None,  # triggered: airflow dags trigger incrc_backfill --conf '{...}'
    start_date=datetime(2026, 1, 1),
    catchup=False,
    params={"pipeline": "dw_events", "from": "2026-01-01", "to": "2026-02-01", "restate": False},
    default_args=retries,
) as backfills:
    # An interrupted backfill resumes after the partitions it finished.
    PythonOperator(task_id="backfill", python_callable=backfill)
