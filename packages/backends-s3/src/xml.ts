// The XML of the signed listings and batch deletes (README, "Reads and listings"): answers are
// parsed with `parseXML` of @aws-sdk/xml-builder, the parser the SDK's own ListObjectsV2 and
// DeleteObjects deserializers use (so entities, character references and whitespace decode
// exactly as on the SDK path); the one request body, `<Delete>`, is built here with every
// key escaped.
import { parseXML } from "@aws-sdk/xml-builder";

/** One `<Contents>` entry of a listing, as S3 sent it (the caller validates). */
export interface ListedEntry {
  readonly key: string | undefined;
  readonly etag: string | undefined;
  readonly lastModified: Date | undefined;
  readonly size: number | undefined;
}

export interface ListedPage {
  readonly contents: readonly ListedEntry[];
  readonly isTruncated: boolean;
  readonly nextContinuationToken: string | undefined;
}

export interface DeleteAnswer {
  readonly deleted: readonly string[];
  readonly errors: readonly {
    readonly key: string | undefined;
    readonly code: string | undefined;
    readonly message: string | undefined;
  }[];
}

type Node = Record<string, unknown>;

/** A ListObjectsV2 answer's `<ListBucketResult>`. */
export function parseListPage(xml: string): ListedPage {
  const root = document(xml, "ListBucketResult");
  const contents = list(root.Contents).map((entry) => {
    const modified = text(entry.LastModified);
    const size = text(entry.Size);
    return {
      key: text(entry.Key),
      etag: text(entry.ETag),
      lastModified: modified === undefined ? undefined : new Date(modified),
      size: size === undefined ? undefined : integer(size),
    };
  });
  return {
    contents,
    isTruncated: text(root.IsTruncated) === "true",
    nextContinuationToken: text(root.NextContinuationToken),
  };
}

/** A DeleteObjects answer's `<DeleteResult>`: deleted keys and per-key errors. */
export function parseDeleteResult(xml: string): DeleteAnswer {
  const root = document(xml, "DeleteResult");
  return {
    deleted: list(root.Deleted)
      .map((entry) => text(entry.Key))
      .filter((key): key is string => key !== undefined),
    errors: list(root.Error).map((entry) => ({
      key: text(entry.Key),
      code: text(entry.Code),
      message: text(entry.Message),
    })),
  };
}

/** The `<Delete>` body for `keys`, in the SDK's form, `Quiet` as given. */
export function deleteObjectsBody(keys: readonly string[], quiet: boolean): string {
  let body =
    '<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">';
  for (const key of keys) body += `<Object><Key>${escapeXml(key)}</Key></Object>`;
  return `${body}<Quiet>${quiet}</Quiet></Delete>`;
}

/**
 * Text escaped for an XML element: the five markup characters, and CR and LF as character
 * references (a parser would otherwise normalize a CR away), as the SDK escapes them.
 */
export function escapeXml(value: string): string {
  return value.replace(/[&<>"'\r\n]/g, (c) => ESCAPES[c]!);
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
  "\r": "&#x0D;",
  "\n": "&#x0A;",
};

function document(xml: string, rootName: string): Node {
  const parsed = parseXML(xml) as Node;
  const root = parsed[rootName];
  // An element without children parses to "" (an empty listing, a quiet DeleteResult).
  if (root === "") return {};
  if (root === undefined || typeof root !== "object" || root === null) {
    throw Object.assign(new Error(`the answer is not a <${rootName}> document`), {
      name: "DeserializationError",
    });
  }
  return root as Node;
}

/** A repeated element: absent, one (an object) or several (an array). */
function list(value: unknown): Node[] {
  if (Array.isArray(value)) return value as Node[];
  if (typeof value === "object" && value !== null) return [value as Node];
  return [];
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  // An element whose only content is whitespace around entities still parses to a string;
  // anything else (an element with children) is not a value.
  return undefined;
}

function integer(value: string): number {
  if (!/^\d+$/.test(value)) {
    throw Object.assign(new Error(`expected an integer, got ${JSON.stringify(value)}`), {
      name: "DeserializationError",
    });
  }
  return Number(value);
}
