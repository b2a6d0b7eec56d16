// The gateway loop of the README, against the client openapi-typescript and
// openapi-fetch generate from docs/openapi.yaml: revalidate the catalogue
// with its ETag (a 304 keeps what is held), long-poll the change feed, apply
// the changed listings, and re-fetch. web/tsclient_test.go runs it against a
// live portal; it prints one JSON line per step for the test to check.
import createClient from "openapi-fetch";
import type { components, paths } from "./api.js"; // generated: npx openapi-typescript docs/openapi.yaml -o api.d.ts

declare const process: { env: Record<string, string | undefined> }; // node's, without @types/node

type Listing = components["schemas"]["Listing"];

const portal = process.env.AIRSIDE_URL ?? "http://127.0.0.1:8080";
const token = process.env.AIRSIDE_TOKEN ?? "";
const api = createClient<paths>({
  baseUrl: `${portal}/api/v1`,
  headers: { Authorization: `Bearer ${token}` },
});

const held = new Map<number, Listing>(); // by listingId
let etag: string | undefined;
let revision = 0;

function step(what: string, detail: Record<string, unknown>) {
  console.log(JSON.stringify({ step: what, ...detail }));
}

// revalidate asks for the catalogue with the ETag held: 200 replaces what is
// held, 304 keeps it. Check the status before `error`: a 304 has no body,
// and openapi-fetch reports it as not ok.
async function revalidate(): Promise<"replaced" | "kept"> {
  const { data, error, response } = await api.GET("/catalogue", {
    params: { header: etag ? { "If-None-Match": etag } : {} },
  });
  if (response.status === 304) {
    return "kept";
  }
  if (error || !data) {
    throw new Error(`catalogue: ${response.status} ${error?.detail ?? ""}`);
  }
  etag = response.headers.get("ETag") ?? undefined;
  revision = data.revision;
  held.clear();
  for (const l of data.listings) held.set(l.listingId, l);
  return "replaced";
}

// waitForChanges holds a long poll until something newer than the revision
// held is published (or the wait ends), and applies what changed: delisted
// listings are dropped, the others replaced.
async function waitForChanges(wait: string): Promise<number> {
  const { data, error, response } = await api.GET("/catalogue/changes", {
    params: { query: { since: revision, wait } },
  });
  if (error || !data) {
    // 429 and 503 say when to come back.
    const retry = Number(response.headers.get("Retry-After") ?? "1");
    throw new Error(`changes: ${response.status}, retry after ${retry} s: ${error?.detail ?? ""}`);
  }
  for (const l of data.listings) {
    if (l.status === "delisted") held.delete(l.listingId);
    else held.set(l.listingId, l);
  }
  revision = data.revision;
  return data.listings.length;
}

const first = await revalidate();
step("fetch", { outcome: first, revision, listings: held.size, etag });
const second = await revalidate();
step("revalidate", { outcome: second, revision });
step("ready", { revision }); // the test publishes a fare now
const changed = await waitForChanges("30s");
step("changes", { changed, revision });
const third = await revalidate();
step("refetch", { outcome: third, revision, listings: held.size, etag });
