// A carrier's repricing job, against the client openapi-typescript and
// openapi-fetch generate from docs/openapi.yaml: list its listings, dry-run
// a fare (the preview page's figures), file it under an Idempotency-Key
// (and send it again, as a job that lost the answer would: one filing),
// then poll the filing until a reviewer decides it. web/tsclient_test.go
// runs it against a live portal; it prints one JSON line per step.
import createClient from "openapi-fetch";
import type { paths } from "./api.js"; // generated: npx openapi-typescript docs/openapi.yaml -o api.d.ts

declare const process: { env: Record<string, string | undefined> }; // node's, without @types/node

const portal = process.env.AIRSIDE_URL ?? "http://127.0.0.1:8080";
const token = process.env.AIRSIDE_TOKEN ?? ""; // a carrier's token: fares:read, fares:write
const listingId = Number(process.env.AIRSIDE_LISTING ?? "0");
const input = process.env.AIRSIDE_INPUT ?? ""; // the new input price, USD per million tokens
const api = createClient<paths>({
  baseUrl: `${portal}/api/v1`,
  headers: { Authorization: `Bearer ${token}` },
});

function step(what: string, detail: Record<string, unknown>) {
  console.log(JSON.stringify({ step: what, ...detail }));
}

function fail(what: string, status: number, error: unknown): never {
  throw new Error(`${what}: ${status} ${JSON.stringify(error)}`);
}

const listed = await api.GET("/carrier/listings");
if (!listed.data) fail("listings", listed.response.status, listed.error);
const mine = listed.data.listings.find((l) => l.listingId === listingId);
step("listings", { count: listed.data.listings.length, published: mine?.published?.["input"] ?? null });

const dry = await api.POST("/carrier/listings/{listingId}/preview", {
  params: { path: { listingId } },
  body: { fare: { input } },
});
if (!dry.data) fail("dry run", dry.response.status, dry.error);
step("dry-run", {
  share: dry.data.share.total,
  routesAt: dry.data.effective.input,
  ranks: dry.data.scenarios.map((s) => s.rank ?? 0),
});

// The key names this change: a retry of the same change answers the first
// filing; a new change needs a new key.
const key = `reprice-${listingId}-${input}`;
async function file() {
  const res = await api.POST("/carrier/listings/{listingId}/filings", {
    params: { path: { listingId }, header: { "Idempotency-Key": key } },
    body: { fare: { input, justification: "Repricing job: matching the market." }, submit: true },
  });
  if (!res.data) fail("file", res.response.status, res.error);
  return { filing: res.data, replayed: res.response.headers.get("Idempotent-Replayed") === "true" };
}
const first = await file();
step("filed", { filingId: first.filing.filingId, state: first.filing.state, replayed: first.replayed });
const again = await file();
step("retried", { filingId: again.filing.filingId, replayed: again.replayed });

// Poll until a reviewer decides (the test approves it meanwhile).
const deadline = Date.now() + 60_000;
for (;;) {
  const got = await api.GET("/carrier/filings/{filingId}", { params: { path: { filingId: first.filing.filingId } } });
  if (!got.data) fail("filing", got.response.status, got.error);
  if (!["draft", "submitted", "changes_requested"].includes(got.data.state)) {
    step("decided", { state: got.data.state, viaToken: got.data.viaToken ?? "", note: got.data.decisionNote ?? "" });
    break;
  }
  if (Date.now() > deadline) throw new Error(`still ${got.data.state} after a minute`);
  await new Promise((r) => setTimeout(r, 100));
}
