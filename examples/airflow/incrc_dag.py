"""incrc on Airflow: every interval, one task per pipeline runs
`incrc run --until {{ data_interval_end }}`; the DAG incrc_backfill, triggered
with a pipeline and a date range, runs `incrc backfill`.

incrc exits 0 when it is done, 1 when a run failed, 2 when a backfill found a
rebuilt partition that does not match its source, and 3 when another run
holds the pipeline's lease (or another process the DuckDB file): 3 means
"retry later", and Airflow retries it; the others are final.
"""
import subprocess
from datetime import datetime, timedelta

from airflow import DAG
from airflow.exceptions import AirflowException, AirflowFailException
from airflow.operators.python import PythonOperator

INCRC = "incrc"  # on the workers' PATH: go install ./cmd/incrc
PROJECT = "/opt/pipelines"  # the repository: incrc.yaml, specs/, sql/
TARGET = "prod"  # a target named in incrc.yaml
PIPELINES = ["dw_orders", "dw_events"]

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


retries = {"retries": 6, "retry_delay": timedelta(minutes=5)}

with DAG(
    "incrc",
    schedule="@hourly",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args=retries,
) as runs:
    for pipeline in PIPELINES:
        # The window ends where the interval does: a rerun of an interval
        # reads the same window, and --until is never later than now.
        PythonOperator(
            task_id=f"run_{pipeline}",
            python_callable=incrc,
            op_args=["run", "--target", TARGET, pipeline, "--until", "{{ data_interval_end }}"],
        )

with DAG(
    "incrc_backfill",
    schedule=None,  # triggered: airflow dags trigger incrc_backfill --conf '{...}'
    start_date=datetime(2026, 1, 1),
    catchup=False,
    params={"pipeline": "dw_events", "from": "2026-01-01", "to": "2026-02-01"},
    default_args=retries,
) as backfills:
    # An interrupted backfill resumes after the partitions it finished.
    PythonOperator(
        task_id="backfill",
        python_callable=incrc,
        op_args=[
            "backfill", "--target", TARGET, "{{ params.pipeline }}",
            "--from", "{{ params['from'] }}", "--to", "{{ params['to'] }}",
        ],
    )
