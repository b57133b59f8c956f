"""pylance's cleanup of one table, in its own process (tooling/bench/README.md,
"Cleaners side by side"): the anchor of the comparison.

Usage: python pylance-cleaner.py '<target json>' (the shape of CleanerTarget in
cleaner-child.ts). Prints one JSON line: wall time and process CPU (user + system, every
thread) of the cleanup_old_versions call alone, and the process's peak RSS.
"""

import json
import resource
import sys
import time
from datetime import timedelta

import lance


def clean(uri: str, storage_options: dict[str, str] | None) -> None:
    # Opening the dataset is part of the call, as holdfast's format detection is.
    dataset = lance.dataset(uri, storage_options=storage_options)
    # Every version but the latest; unreferenced files younger than 7 days stay (the
    # counterpart of holdfast's orphan grace).
    dataset.cleanup_old_versions(
        older_than=timedelta(0), retain_versions=1, delete_unverified=False
    )


def main() -> None:
    target = json.loads(sys.argv[1])
    if target.get("warmRoot"):
        # --warm: a second copy cleaned first, untimed (as the Node cleaners do).
        clean(f"{target['warmRoot']}/{target['table']}.lance", None)
    if target["kind"] == "local":
        uri = f"{target['root']}/{target['table']}.lance"
        storage_options = None
    else:
        uri = f"s3://{target['bucket']}/{target['prefix']}/{target['table']}.lance"
        storage_options = {
            "aws_endpoint": target["endpoint"],
            "aws_access_key_id": target["accessKeyId"],
            "aws_secret_access_key": target["secretAccessKey"],
            "aws_region": target["region"],
            "allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
        }
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    clean(uri, storage_options)
    ms = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_ms = (
        after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    ) * 1000
    print(
        json.dumps(
            {
                "ms": ms,
                "cpuMs": cpu_ms,
                # ru_maxrss is in KiB on Linux.
                "peakRssMiB": after.ru_maxrss / 1024,
                "requests": None,
            }
        )
    )


if __name__ == "__main__":
    main()
