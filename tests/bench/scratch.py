"""A scratch copy of the project for the benchmarks: its recipes linked, its patches copied
(so a benchmark can change one), and work directories whose download caches hard-link the
files already in work/cache (so the network does not blur a figure)."""
import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CROSSROOT = os.path.join(ROOT, "crossroot")


def project(scratch):
    """SCRATCH/project: targets, stages, sources, tests and keys linked; patches copied."""
    path = os.path.join(scratch, "project")
    os.makedirs(path)
    for d in ("targets", "stages", "sources", "tests", "keys"):
        os.symlink(os.path.join(ROOT, d), os.path.join(path, d))
    shutil.copytree(os.path.join(ROOT, "patches"), os.path.join(path, "patches"))
    return path


def crossroot(scratch, proj, name):
    """The crossroot command line for a fresh work directory, cache and output SCRATCH/NAME,
    its download cache filled with links to work/cache's files."""
    cache = os.path.join(scratch, name, "cache")
    os.makedirs(os.path.join(cache, "downloads"))
    downloads = os.path.join(ROOT, "work", "cache", "downloads")
    if os.path.isdir(downloads):
        for f in os.listdir(downloads):
            if os.path.isfile(os.path.join(downloads, f)):
                os.link(os.path.join(downloads, f), os.path.join(cache, "downloads", f))
    return [CROSSROOT, "-C", proj, "--work", os.path.join(scratch, name, "work"),
            "--cache", cache, "--out", os.path.join(scratch, name, "sysroots")]
