"""Where a table is: the rule "where is the table root, and is this URI inside one", as
``@holdfast/refs-lifecycle``'s ``locateTable`` states it (conformance/table-root/).

A URI inside a table (a Lance branch's folder ``t.lance/tree/dev``, ``_versions/``,
``data/``, an index folder, holdfast's own ``_holdfast/``, ...) or naming a folder that
holds a table is never a table: a lease written there lands where the table's cleanup never
looks. :func:`locate_table` says where a URI stands; :func:`refuse_table_location` turns
"inside" and "holds" into ``invalid-input`` (INSIDE_TABLE, HOLDS_TABLE) naming the table's
root, before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from .errors import HoldfastError
from .store import ObjectStore

TABLE_LAYOUT_FOLDERS = frozenset(
    (
        "_versions",
        "data",
        "_deletions",
        "_indices",
        "_transactions",
        "_refs",
        "tree",
        "_holdfast",
        "_mem_wal",
        "_blobs",
        "_fri",
    )
)
"""The folders a table root keeps (Lance's and holdfast's). A folder below a table root is
inside the table only through one of these, so only an ancestor followed by one of these
names is asked whether it is a table root."""

INSIDE_TABLE = "INSIDE_TABLE"
HOLDS_TABLE = "HOLDS_TABLE"
HELD_TABLE_PROBES = 16
"""How many child folders of a URI without a table are asked before it is called empty of
tables."""

HOLDFAST_DATASET_KEY = "_holdfast/dataset.json"
LANCE_DETECT_PAGE = 64

TableFormat = Literal["lance", "holdfast"]
StoreAt = Callable[[Sequence[str]], "ObjectStore | None"]


@dataclass(frozen=True)
class TableLocation:
    """Where a URI stands: ``table`` (a table root of ``format``), ``inside`` the table at
    ``root`` (namespace segments) through its layout folder ``folder`` (``branch``: the
    Lance branch whose folder ``tree/{branch}/`` it is or lies in), ``holds`` the table at
    its child folder ``root``, or ``none``."""

    kind: Literal["table", "inside", "holds", "none"]
    format: TableFormat | None = None
    root: tuple[str, ...] = ()
    folder: str | None = None
    branch: str | None = None


def table_format_at(store: ObjectStore) -> TableFormat | None:
    """Which format's table has its root at ``store``'s root, from marker keys only: one
    listing of ``_versions/`` (a Lance manifest name: ``lance``), then one HEAD of
    holdfast's dataset marker. One or two requests."""
    from .lance import classify_versions_key

    page = store.list("_versions/", page_size=LANCE_DETECT_PAGE)
    if any(classify_versions_key(meta.key) is not None for meta in page.objects):
        return "lance"
    return "holdfast" if store.head(HOLDFAST_DATASET_KEY) is not None else None


def locate_table(segments: Sequence[str], store_at: StoreAt) -> TableLocation:
    """The rule, in three steps (each ask is :func:`table_format_at`):

    1. every ancestor followed by a table layout folder name, outermost first: the first
       that is a table root makes the URI ``inside`` it;
    2. else the URI itself: a table root is ``table``;
    3. else its first :data:`HELD_TABLE_PROBES` child folders: the first table root among
       them makes the URI ``holds`` it.
    """
    segments = tuple(segments)
    for i, segment in enumerate(segments):
        if segment not in TABLE_LAYOUT_FOLDERS:
            continue
        root = segments[:i]
        store = store_at(root)
        found = None if store is None else table_format_at(store)
        if found is None:
            continue
        branch = None
        if segment == "tree" and found != "holdfast":
            rest = segments[i + 1 :]
            end = next((j for j, s in enumerate(rest) if s in TABLE_LAYOUT_FOLDERS), len(rest))
            branch = "/".join(rest[:end]) or None
        return TableLocation("inside", found, root, segment, branch)
    here = store_at(segments)
    if here is None:
        return TableLocation("none")
    found = table_format_at(here)
    if found is not None:
        return TableLocation("table", found)
    start_after: str | None = None
    for _ in range(HELD_TABLE_PROBES):
        page = here.list("", start_after=start_after, page_size=1)
        if not page.objects:
            break
        key = page.objects[0].key
        if "/" not in key:
            start_after = key
            continue
        child = key[: key.index("/")]
        # Past every key of the child folder, as the TypeScript rule steps.
        start_after = f"{child}/\U0010ffff"
        store = store_at((*segments, child))
        held = None if store is None else table_format_at(store)
        if held is not None:
            return TableLocation("holds", held, (*segments, child))
    return TableLocation("none")


def refuse_table_location(
    location: TableLocation, display: Callable[[Sequence[str]], str], operation: str = "open"
) -> None:
    """``invalid-input`` INSIDE_TABLE (naming the table's root; for a Lance branch folder:
    pass the table URI and the branch) or HOLDS_TABLE (naming the table below); nothing for
    ``table`` and ``none``."""
    what = "Lance table" if location.format == "lance" else "holdfast dataset"
    if location.kind == "inside":
        root = display(location.root)
        inner = (
            f"its {location.folder}/ folder"
            if location.branch is None
            else f"the folder of its branch {location.branch} (tree/{location.branch}/)"
        )
        raise HoldfastError(
            "invalid-input",
            operation,
            f"this URI is inside the {what} at {root} ({inner}): a folder inside a table is "
            "never a table; nothing was read or written",
            key=root,
            code=INSIDE_TABLE,
            hint=f"pass the table's URI: {root}"
            if location.branch is None
            else f'pass the table\'s URI and the branch: checkout("{root}", '
            f'branch="{location.branch}", ...)',
        )
    if location.kind == "holds":
        root = display(location.root)
        raise HoldfastError(
            "invalid-input",
            operation,
            f"this URI is a folder that holds the {what} {root}, not a table; nothing was "
            "read or written",
            key=root,
            code=HOLDS_TABLE,
            hint=f"pass the table's URI: {root}",
        )
