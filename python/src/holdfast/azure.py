"""An Azure Blob store on azure-storage-blob.

What the lease protocol needs of Azure, all native there (docs/protocol.md §2, §4): create-only
Put Blob with ``If-None-Match: *`` (acquire; Azurite and Azure answer 409
``BlobAlreadyExists``), compare-and-swap with ``If-Match`` (renew; 412 ``ConditionNotMet``),
Delete Blob with ``If-Match`` (release; atomic on Azure), Get Blob / Get Blob Properties with
ETag and Last-Modified, and List Blobs. Last-Modified is whole seconds: the store declares
1000 ms precision. ETags are handed out bare and sent back quoted, as the service documents.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Literal

from .errors import ErrorKind, HoldfastError
from .store import (
    Capabilities,
    GetResult,
    IfAbsent,
    IfMatch,
    ListPage,
    ObjectMeta,
    Precondition,
    check_abort,
    validate_key,
    validate_prefix,
)

if TYPE_CHECKING:
    from azure.storage.blob import ContainerClient

AZURE_BACKEND = "azure"


class AzureStore:
    """A holdfast store in ``container`` under ``prefix``."""

    backend = AZURE_BACKEND

    def __init__(
        self,
        container: str,
        prefix: str = "",
        *,
        connection_string: str | None = None,
        account_url: str | None = None,
        credential: Any = None,
        client: Literal["repeating", "single-attempt"] = "repeating",
    ) -> None:
        """Credentials: ``connection_string`` (default ``AZURE_STORAGE_CONNECTION_STRING``),
        or ``account_url`` with a ``credential`` (e.g. ``DefaultAzureCredential()``).
        ``client``: ``repeating`` keeps the SDK's retries; ``single-attempt`` sends each
        request once. The container must exist: holdfast never creates one."""
        import os

        prefix = prefix.strip("/")
        if prefix:
            validate_key(prefix, "open")
        if account_url is None:
            connection_string = connection_string or os.environ.get(
                "AZURE_STORAGE_CONNECTION_STRING"
            )
            if not connection_string:
                raise HoldfastError(
                    "invalid-input",
                    "open",
                    "no Azure credentials configured",
                    hint="set AZURE_STORAGE_CONNECTION_STRING, or pass connection_string, or "
                    "account_url with a credential",
                )
        elif credential is None:
            raise HoldfastError("invalid-input", "open", "account_url needs a credential")
        self.container = container
        self._root = f"{prefix}/" if prefix else ""
        self.location = f"az://{container}/{prefix}" if prefix else f"az://{container}"
        self.capabilities = Capabilities(
            atomic_conditional_update=True,
            atomic_conditional_delete=True,
            timestamp_precision_ms=1000,
            request_mode=client,
            # Rewriting identical bytes changes the ETag on Azure.
            etag_is_content_hash=False,
        )
        self._settings = (connection_string, account_url, credential)
        self._client: ContainerClient | None = None
        self._guard = threading.Lock()

    @property
    def client(self) -> ContainerClient:
        """The container client, built on first use."""
        with self._guard:
            if self._client is None:
                from azure.storage.blob import BlobServiceClient

                connection_string, account_url, credential = self._settings
                retry: dict[str, Any] = (
                    {"retry_total": 0} if self.capabilities.request_mode == "single-attempt" else {}
                )
                if account_url is None:
                    assert connection_string is not None
                    service = BlobServiceClient.from_connection_string(connection_string, **retry)
                else:
                    service = BlobServiceClient(account_url, credential=credential, **retry)
                self._client = service.get_container_client(self.container)
            return self._client

    # https://learn.microsoft.com/rest/api/storageservices/get-blob
    def get(self, key: str, *, abort: threading.Event | None = None) -> GetResult | None:
        validate_key(key, "get")
        check_abort(abort, "get", key)
        try:
            downloader = self.client.download_blob(self._root + key)
            body = downloader.readall()
            props = downloader.properties
        except Exception as error:
            mapped = to_holdfast_error(error, "get", key, None)
            if mapped.kind == "not-found":
                return None
            raise mapped from error
        return GetResult(
            key, _bare(props.etag), _ms(props.last_modified, "get", key), len(body), bytes(body)
        )

    # https://learn.microsoft.com/rest/api/storageservices/get-blob-properties
    def head(self, key: str, *, abort: threading.Event | None = None) -> ObjectMeta | None:
        validate_key(key, "head")
        check_abort(abort, "head", key)
        try:
            props = self.client.get_blob_client(self._root + key).get_blob_properties()
        except Exception as error:
            mapped = to_holdfast_error(error, "head", key, None)
            if mapped.kind == "not-found":
                return None
            raise mapped from error
        return ObjectMeta(
            key, _bare(props.etag), _ms(props.last_modified, "head", key), int(props.size or 0)
        )

    # https://learn.microsoft.com/rest/api/storageservices/put-blob
    def put(
        self,
        key: str,
        body: bytes,
        *,
        precondition: Precondition | None = None,
        abort: threading.Event | None = None,
    ) -> str:
        validate_key(key, "put")
        check_abort(abort, "put", key)
        from azure.core import MatchConditions

        conditions: dict[str, Any] = {}
        if isinstance(precondition, IfAbsent):
            conditions = {"match_condition": MatchConditions.IfMissing}
        elif isinstance(precondition, IfMatch):
            conditions = {
                "match_condition": MatchConditions.IfNotModified,
                "etag": f'"{_strip(precondition.etag)}"',
            }
        try:
            answer = self.client.get_blob_client(self._root + key).upload_blob(
                bytes(body), blob_type="BlockBlob", overwrite=True, **conditions
            )
        except Exception as error:
            raise to_holdfast_error(error, "put", key, precondition) from error
        return _bare(answer.get("etag"))

    # https://learn.microsoft.com/rest/api/storageservices/delete-blob
    def delete(
        self, key: str, *, if_match: str | None = None, abort: threading.Event | None = None
    ) -> None:
        validate_key(key, "delete")
        check_abort(abort, "delete", key)
        from azure.core import MatchConditions

        precondition = None if if_match is None else IfMatch(if_match)
        conditions: dict[str, Any] = {}
        if precondition is not None:
            conditions = {
                "match_condition": MatchConditions.IfNotModified,
                "etag": f'"{_strip(precondition.etag)}"',
            }
        try:
            self.client.get_blob_client(self._root + key).delete_blob(**conditions)
        except Exception as error:
            mapped = to_holdfast_error(error, "delete", key, precondition)
            if mapped.kind == "not-found":
                return  # deleting an absent key unconditionally is success
            raise mapped from error

    # https://learn.microsoft.com/rest/api/storageservices/list-blobs
    def list(
        self,
        prefix: str,
        *,
        start_after: str | None = None,
        page_token: str | None = None,
        page_size: int | None = None,
        abort: threading.Event | None = None,
    ) -> ListPage:
        validate_prefix(prefix, "list")
        check_abort(abort, "list")
        try:
            pages: Any = self.client.list_blobs(
                name_starts_with=self._root + prefix, results_per_page=page_size or 1000
            ).by_page(continuation_token=page_token)
            page = next(pages, None)
            items = [] if page is None else list(page)
            token = pages.continuation_token
        except Exception as error:
            raise to_holdfast_error(error, "list", None, None) from error
        objects = [
            ObjectMeta(
                item.name[len(self._root) :],
                _bare(item.etag),
                _ms(item.last_modified, "list", item.name),
                int(item.size or 0),
            )
            for item in items
            if start_after is None or item.name[len(self._root) :].encode() > start_after.encode()
        ]
        return ListPage(objects, token or None)


def to_holdfast_error(
    error: BaseException, operation: str, key: str | None, precondition: Precondition | None
) -> HoldfastError:
    """412 and 409 ``BlobAlreadyExists`` → conflict (a 409 answering an if-match too);
    404 → not-found (conflict under if-match; ``ContainerNotFound`` → refused); 401/403 →
    auth; other 4xx → refused; 408, 429, 5xx, no answer → ambiguous."""
    if isinstance(error, HoldfastError):
        return error
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError

    where = operation if key is None else f"{operation} {key}"

    def make(kind: ErrorKind, status: int | None, code: str | None) -> HoldfastError:
        return HoldfastError(
            kind,
            operation,
            f"{where}: {status or 'no answer'} {code or type(error).__name__}",
            key=key,
            status=status,
            code=code,
            precondition=precondition,
            cause=error,
        )

    if isinstance(error, HttpResponseError) and error.status_code is not None:
        status = int(error.status_code)
        raw = getattr(error, "error_code", None)
        code = None if raw is None else str(getattr(raw, "value", raw))
        if status == 412:
            return make("conflict", status, code)
        if status == 409:
            if code == "BlobAlreadyExists" or precondition is not None:
                return make("conflict", status, code)
            return make("refused", status, code)
        if status == 404:
            if code == "ContainerNotFound":
                return make("refused", status, code)
            if isinstance(precondition, IfMatch):
                return make("conflict", status, code)
            return make("not-found", status, code)
        if status in (401, 403) or isinstance(error, ClientAuthenticationError):
            return make("auth", status, code)
        if status in (408, 429) or status >= 500:
            return make("ambiguous", status, code)
        return make("refused", status, code)
    # Reset, timeout, refused connection, DNS: the request may or may not have reached Azure.
    return make("ambiguous", None, None)


def _strip(etag: str) -> str:
    if etag.startswith("W/"):
        etag = etag[2:]
    return etag.strip('"')


def _bare(etag: object) -> str:
    return _strip(etag) if isinstance(etag, str) else ""


def _ms(value: object, operation: str, key: str) -> int:
    from datetime import datetime

    if not isinstance(value, datetime):
        raise HoldfastError(
            "ambiguous", operation, f"{operation} {key}: answer lacked Last-Modified", key=key
        )
    return round(value.timestamp() * 1000)
