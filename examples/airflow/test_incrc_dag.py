"""Tests of incrc_dag.py without Airflow: a stand-in of the three Airflow
names it imports, and a stand-in incrc that exits with a chosen code.

    python3 examples/airflow/test_incrc_dag.py
"""
import contextlib
import importlib.util
import io
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
        DAG.current.tasks.append(self)


def load_dag():
    airflow = types.ModuleType("airflow")
    airflow.DAG = DAG
    exceptions = types.ModuleType("airflow.exceptions")
    exceptions.AirflowException = AirflowException
    exceptions.AirflowFailException = AirflowFailException
    operators = types.ModuleType("airflow.operators")
    python = types.ModuleType("airflow.operators.python")
    python.PythonOperator = PythonOperator
    sys.modules.update({"airflow": airflow, "airflow.exceptions": exceptions,
                        "airflow.operators": operators, "airflow.operators.python": python})
    spec = importlib.util.spec_from_file_location("incrc_dag", HERE / "incrc_dag.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class TestDag(unittest.TestCase):
    def setUp(self):
        self.dag = load_dag()
        self.dir = tempfile.mkdtemp()
        self.dag.PROJECT = self.dir

    def fake_incrc(self, code):
        path = os.path.join(self.dir, "incrc")
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho \"$@\"\nexit {code}\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        self.dag.INCRC = path

    def test_one_run_task_per_pipeline_until_the_interval_end(self):
        tasks = {t.task_id: t for t in self.dag.runs.tasks}
        self.assertEqual(sorted(tasks), ["run_dw_events", "run_dw_orders"])
        self.assertEqual(tasks["run_dw_orders"].op_args,
                         ["run", "--target", "prod", "dw_orders", "--until", "{{ data_interval_end }}"])

    def test_backfill_of_a_range(self):
        (task,) = self.dag.backfills.tasks
        self.assertEqual(task.op_args[:4], ["backfill", "--target", "prod", "{{ params.pipeline }}"])
        self.assertIn("--from", task.op_args)
        self.assertIn("--to", task.op_args)
        self.assertIsNone(self.dag.backfills.kwargs["schedule"])

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


if __name__ == "__main__":
    unittest.main()
