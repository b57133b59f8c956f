"""The real stores the suite runs on: a local folder, the test Ceph RGW, Azurite and
fake-gcs-server.

They read the same variables the TypeScript tests read (``npm test`` writes them to
``/tmp/holdfast-services/*.env``). A missing variable fails the test with a clear message:
no test is skipped.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import holdfast
from holdfast.azure import AzureStore
from holdfast.gcs import GcsStore, open_gcs_store
from holdfast.s3 import S3Store, open_s3_store

STORE_KINDS = ["local", "s3", "azure", "gcs"]
CLI_STORE_KINDS = ["local", "s3", "azure"]
"""The stores the holdfast CLI opens (it has no gs:// URLs yet)."""


def need(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(
            f"{name} is not set: source /tmp/holdfast-services/rgw.env and azurite.env "
            "(npm test starts the services and sets them)"
        )
    return value


def s3_options() -> dict[str, Any]:
    return {
        "endpoint": need("HOLDFAST_S3_ENDPOINT"),
        "region": os.environ.get("HOLDFAST_S3_REGION", "us-east-1"),
        "path_style": os.environ.get("HOLDFAST_S3_PATH_STYLE", "true") == "true",
    }


def open_store(kind: str, tmp: Path, prefix: str | None = None) -> holdfast.ObjectStore:
    """A fresh, empty store of ``kind`` (its own prefix on the shared services)."""
    prefix = prefix or f"py-{secrets.token_hex(6)}"
    if kind == "local":
        return holdfast.LocalStore(tmp / prefix, fsync=False)
    if kind == "s3":
        return open_s3_store(need("HOLDFAST_S3_BUCKET"), prefix, **s3_options())
    if kind == "azure":
        return AzureStore(
            need("HOLDFAST_AZURE_CONTAINER"),
            prefix,
            connection_string=need("AZURE_STORAGE_CONNECTION_STRING"),
        )
    if kind == "gcs":
        need("STORAGE_EMULATOR_HOST")
        return open_gcs_store(need("HOLDFAST_GCS_BUCKET"), prefix)
    raise ValueError(kind)


def peer_spec(store: holdfast.ObjectStore) -> dict[str, Any]:
    """How ``ts_peer.mjs`` opens the same store."""
    if isinstance(store, holdfast.LocalStore):
        return {"kind": "local", "root": store.root}
    if isinstance(store, S3Store):
        options = s3_options()
        return {
            "kind": "s3",
            "bucket": store.bucket,
            "prefix": store._root.rstrip("/"),
            "endpoint": options["endpoint"],
            "region": options["region"],
        }
    if isinstance(store, AzureStore):
        return {
            "kind": "azure",
            "container": store.container,
            "prefix": store._root.rstrip("/"),
            "connectionString": need("AZURE_STORAGE_CONNECTION_STRING"),
        }
    if isinstance(store, GcsStore):
        return {
            "kind": "gcs",
            "bucket": store.bucket,
            "prefix": store._root.rstrip("/"),
            "endpoint": need("STORAGE_EMULATOR_HOST"),
        }
    raise TypeError(store)


def storage_url(store: holdfast.ObjectStore) -> list[str]:
    """The CLI's storage URL (and options) for the same store."""
    if isinstance(store, holdfast.LocalStore):
        return [store.root]
    if isinstance(store, S3Store):
        options = s3_options()
        return [
            f"s3://{store.bucket}/{store._root.rstrip('/')}",
            "--endpoint",
            options["endpoint"],
            "--region",
            options["region"],
            "--path-style",
        ]
    if isinstance(store, AzureStore):
        return [f"az://{store.container}/{store._root.rstrip('/')}"]
    raise TypeError(store)
