"""An installed wheel, not only this checkout, finds the catalog and the task suite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from toolbed.apis import load_catalog
from toolbed.tasks import load_tasks

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted({folder.split("/")[0] for folder in tomllib.loads(
    (ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"].values()})
"""The top-level folders the package is built from."""


def test_a_wheel_install_loads_the_same_catalog_and_tasks(tmp_path):
    source = tmp_path / "source"                    # build a copy: the checkout stays clean
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in PACKAGES:
        shutil.copytree(ROOT / folder, source / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(tmp_path / "dist"), str(source)],
                   check=True, capture_output=True, timeout=300)
    wheel = next((tmp_path / "dist").glob("toolbed-*.whl"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    probe = ("import json, toolbed.apis as a, toolbed.tasks as t; "
             "print(json.dumps([a.__file__, t.__file__, len(a.load_catalog(a.CATALOG_DIR)), "
             "len(t.load_tasks())]))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(target)})
    assert done.returncode == 0, done.stderr
    apis_file, tasks_file, apis, tasks = json.loads(done.stdout)
    assert Path(apis_file).is_relative_to(target) and Path(tasks_file).is_relative_to(target)
    assert apis == len(load_catalog()) and tasks == len(load_tasks())
