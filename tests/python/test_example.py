"""The Python example (examples/python_quickstart.py) runs and finishes cleanly."""
import os
import subprocess
import sys

from conftest import ROOT


def test_quickstart_example():
    p = subprocess.run([sys.executable, os.path.join(ROOT, 'examples', 'python_quickstart.py')],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert 'max abs error vs golden' in p.stdout
