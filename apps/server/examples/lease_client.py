#!/usr/bin/env python3
"""Take a holdfast lease over HTTP, renew it while reading, release it.

Standard library only. Usage:
  lease_client.py --url http://127.0.0.1:8080 --dataset ds --version 1 --ttl-ms 3000 --reads 5
The token comes from HOLDFAST_TOKEN. Prints one JSON line per event.
"""

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


class HoldfastError(Exception):
    """An RFC 9457 problem answer: status, kind, detail."""

    def __init__(self, problem):
        super().__init__(f"{problem.get('status')} {problem.get('kind')}: {problem.get('detail')}")
        self.problem = problem


def call(base, token, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method)
    request.add_header("authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("content-type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as error:
        raise HoldfastError(json.load(error)) from None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--version", type=int, required=True)
    parser.add_argument("--ttl-ms", type=int, default=30000)
    parser.add_argument("--reads", type=int, default=3)
    args = parser.parse_args()
    token = os.environ["HOLDFAST_TOKEN"]
    base = f"{args.url}/v1/datasets/{args.dataset}"

    held = call(base, token, "POST", "/leases", {"version": args.version, "ttlMs": args.ttl_ms})
    handle = held["handle"]
    print(json.dumps({"event": "acquired", "leaseId": handle["leaseId"], "expiresAt": held["lease"]["expiresAt"]}), flush=True)
    # Renew every third of the TTL, measured on this host only to decide when to call:
    # expiry itself is the store's business.
    renew_every = args.ttl_ms / 3000
    renewals = 0
    try:
        last_renewal = time.monotonic()
        for read in range(1, args.reads + 1):
            page = call(base, token, "GET", f"/versions?limit=1000&branch={handle['branch']}")
            present = any(v["version"] == handle["version"] for v in page["versions"])
            if not present:
                raise RuntimeError(f"version {handle['version']} vanished while leased")
            print(json.dumps({"event": "read", "read": read}), flush=True)
            time.sleep(renew_every / 2)
            if time.monotonic() - last_renewal >= renew_every:
                handle = call(base, token, "POST", f"/leases/{handle['leaseId']}/renew", {"handle": handle})["handle"]
                renewals += 1
                last_renewal = time.monotonic()
                print(json.dumps({"event": "renewed", "renewal": handle["renewal"]}), flush=True)
    finally:
        call(base, token, "POST", f"/leases/{handle['leaseId']}/release", {"handle": handle})
        print(json.dumps({"event": "released", "leaseId": handle["leaseId"], "renewals": renewals}), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except HoldfastError as error:
        print(json.dumps({"event": "error", "problem": error.problem}), file=sys.stderr)
        sys.exit(1)
