"""Tests of incrc_dag.py without Airflow: a stand-in of the three Airflow
names it imports, and a stand-in incrc that answers validate --json with a
project and exits with a chosen code. (.ci/airflow runs the DAG on Airflow
itself.)

    python3 examples/airflow/test_incrc_dag.py
"""
import contextlib
import importlib.util
import io
import json
import os
import pathlib
import stat
import sys
import tempfile
import types
import unittest

HERE = pathlib.Path(__file__).resolve().parent


class AirflowException(Exception):
    pass


class AirflowFailException(AirflowException):
    pass


class DAG:
    current = None

    def __init__(self, dag_id, **kwargs):
        self.dag_id, self.kwargs, self.tasks = dag_id, kwargs, []

    def __enter__(self):
        DAG.current = self
        return self

    def __exit__(self, *exc):
        DAG.current = None


class PythonOperator:
    def __init__(self, task_id, python_callable, op_args=()):
        self.task_id, self.python_callable, self.op_args = task_id, python_callable, list(op_args)
        self.downstream = []
        DAG.current.tasks.append(self)

    def __rshift__(self, other):
        self.downstream.append(other.task_id)
        return other


# The project the stand-in incrc reports: a time watermark, an integer one
# (a monotonic id: --until does not apply), and a pipeline that reads
# another's target.
PROJECT = {"valid": [
    {"pipeline": "dw_orders", "file": "specs/orders.yaml", "until": True, "upstream": []},
    {"pipeline": "dw_audit", "file": "specs/audit.yaml", "until": False, "upstream": []},
    {"pipeline": "dw_revenue", "file": "specs/revenue.yaml", "until": True, "upstream": ["dw_orders"]},
], "errors": []}


def fake_incrc(directory, code, project=PROJECT):
    """A stand-in incrc: validate --json prints the project, anything else
    echoes its arguments and exits with code."""
    path = os.path.join(directory, "incrc")
    with open(os.path.join(directory, "project.json"), "w") as f:
        json.dump(project, f)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"if [ \"$1\" = validate ]; then cat '{directory}/project.json'; exit 0; fi\n"
                f"echo \"$@\"\nexit {code}\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def load_dag(directory):
    airflow = types.ModuleType("airflow")
    sdk = types.ModuleType("airflow.sdk")
    sdk.DAG = DAG
    exceptions = types.ModuleType("airflow.sdk.exceptions")
    exceptions.AirflowException = AirflowException
    exceptions.AirflowFailException = AirflowFailException
    python = types.ModuleType("airflow.providers.standard.operators.python")
    python.PythonOperator = PythonOperator
    sys.modules.update({"airflow": airflow, "airflow.sdk": sdk, "airflow.sdk.exceptions": exceptions,
                        "airflow.providers": types.ModuleType("airflow.providers"),
                        "airflow.providers.standard": types.ModuleType("airflow.providers.standard"),
                        "airflow.providers.standard.operators": types.ModuleType("airflow.providers.standard.operators"),
                        "airflow.providers.standard.operators.python": python})
    os.environ.update({"INCRC": fake_incrc(directory, 0), "INCRC_PROJECT": directory, "INCRC_TARGET": "prod"})
    spec = importlib.util.spec_from_file_location("incrc_dag", HERE / "incrc_dag.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class TestDag(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.dag = load_dag(self.dir)

    def fake_incrc(self, code):
        self.dag.INCRC = fake_incrc(self.dir, code)

    def test_one_run_task_per_pipeline_of_the_project(self):
        tasks = {t.task_id: t for t in self.dag.runs.tasks}
        self.assertEqual(sorted(tasks), ["run_dw_audit", "run_dw_orders", "run_dw_revenue"])
        self.assertEqual(tasks["run_dw_orders"].op_args,
                         ["run", "--target", "prod", "dw_orders", "--until", "{{ data_interval_end }}"])

    def test_no_until_for_an_integer_watermark(self):
        tasks = {t.task_id: t for t in self.dag.runs.tasks}
        self.assertEqual(tasks["run_dw_audit"].op_args, ["run", "--target", "prod", "dw_audit"])

    def test_upstream_first(self):
        tasks = {t.task_id: t for t in self.dag.runs.tasks}
        self.assertEqual(tasks["run_dw_orders"].downstream, ["run_dw_revenue"])
        self.assertEqual(tasks["run_dw_audit"].downstream, [])

    def test_a_broken_project_fails_the_import(self):
        path = os.path.join(self.dir, "incrc")
        with open(path, "w") as f:
            f.write("#!/bin/sh\necho 'specs/orders.yaml:3:1: unknown key' >&2\nexit 1\n")
        with self.assertRaises(RuntimeError) as cm:
            load_dag_again(self.dir)
        self.assertIn("unknown key", str(cm.exception))

    def test_backfill_of_a_range(self):
        (task,) = self.dag.backfills.tasks
        self.assertIsNone(self.dag.backfills.kwargs["schedule"])
        self.fake_incrc(0)
        params = {"pipeline": "dw_events", "from": "2026-01-01", "to": "2026-02-01", "restate": False}
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(task.python_callable(params=params),
                             "backfill --target prod dw_events --from 2026-01-01 --to 2026-02-01\n")
            self.assertEqual(task.python_callable(params={**params, "restate": True}),
                             "backfill --target prod dw_events --from 2026-01-01 --to 2026-02-01 --restate\n")

    def test_exit_codes(self):
        with contextlib.redirect_stdout(io.StringIO()):
            self.check_exit_codes()

    def check_exit_codes(self):
        self.fake_incrc(0)
        self.assertEqual(self.dag.incrc("run", "dw_orders"), "run dw_orders\n")
        self.fake_incrc(3)
        with self.assertRaises(AirflowException) as cm:
            self.dag.incrc("run", "dw_orders")
        self.assertNotIsInstance(cm.exception, AirflowFailException, "exit 3 must be retried")
        for code in (1, 2):
            self.fake_incrc(code)
            with self.assertRaises(AirflowFailException, msg=f"exit {code} is final"):
                self.dag.incrc("backfill", "dw_events")


def load_dag_again(directory):
    """Imports the DAG with the incrc already in directory."""
    os.environ.update({"INCRC": os.path.join(directory, "incrc"), "INCRC_PROJECT": directory})
    spec = importlib.util.spec_from_file_location("incrc_dag_again", HERE / "incrc_dag.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


if __name__ == "__main__":
    unittest.main()
