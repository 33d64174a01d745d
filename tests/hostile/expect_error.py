#!/usr/bin/python3
"""expect_error.py [--timeout S] CMD ARGS...: CMD must fail cleanly.

Passes when CMD exits with status 1 within the timeout and wrote exactly one line to stderr,
starting with "error: ". Fails on success, on any other status (a signal means a crash), on a
hang, and on an error spread over several lines or preceded by other output. The stderr line is
printed to stdout for FileCheck.
"""
import subprocess
import sys


def main():
    args = sys.argv[1:]
    timeout = 60
    if args[:1] == ['--timeout']:
        timeout = float(args[1])
        args = args[2:]
    try:
        p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        sys.exit('expect_error: %s did not finish in %g s (a hang)' % (args[0], timeout))
    err = p.stderr.decode('utf-8', 'replace')
    lines = err.splitlines()
    if p.returncode < 0:
        sys.exit('expect_error: killed by signal %d (a crash); stderr:\n%s' % (-p.returncode, err))
    if p.returncode != 1:
        sys.exit('expect_error: exit status %d, expected 1; stderr:\n%s' % (p.returncode, err))
    if len(lines) != 1 or not lines[0].startswith('error: '):
        sys.exit('expect_error: expected one "error: " line on stderr, got:\n%s' % err)
    print(lines[0])


if __name__ == '__main__':
    main()
