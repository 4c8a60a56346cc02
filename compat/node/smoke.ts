// A TypeScript client of Herald's HTTP API, generated from api/openapi.yaml
// alone (openapi-typescript's types, openapi-fetch's typed client), against
// a real `herald serve --dev` at HERALD_URL: register a device for a user,
// trigger a notification to that user on push and the in-app inbox, read the
// notification's status until it is delivered, and find it in the inbox.
//
// compat's TestTypeScriptClient generates gen/openapi.d.ts, compiles this
// file with tsc (strict: a call the document does not allow is a type
// error), starts the server and runs it; a non-zero exit fails the test.
import createClient from "openapi-fetch";
import type { paths } from "./gen/openapi.js";

const baseUrl = process.env.HERALD_URL;
if (!baseUrl) {
  throw new Error("HERALD_URL is not set (the address of a herald serve --dev)");
}
const client = createClient<paths>({ baseUrl });

function fail(step: string, detail: unknown): never {
  throw new Error(`${step}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
}

const run = `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
const userId = `ts-${run}`;
const deviceId = `ts-device-${run}`;

// The user, then a push device of the user's.
{
  const { data, error, response } = await client.PUT("/v1/users/{id}", {
    params: { path: { id: userId } },
    body: { timezone: "UTC" },
  });
  if (error || !data) fail(`PUT /v1/users/${userId} ${response.status}`, error);
  if (data.id !== userId) fail("PUT /v1/users", `id ${data.id}, want ${userId}`);
}
{
  const { data, error, response } = await client.POST("/v1/users/{id}/devices", {
    params: { path: { id: userId } },
    body: { device_id: deviceId, token: `tok-${run}`, platform: "android", push_opt_in: true },
  });
  if (error || !data) fail(`POST /v1/users/${userId}/devices ${response.status}`, error);
  if (data.device_id !== deviceId || data.status !== "ACTIVE") fail("POST devices", data);
}

// A trigger, sent once whatever the retries: the Idempotency-Key makes it so.
let notificationId: string;
{
  const { data, error, response } = await client.POST("/v1/notifications", {
    params: { header: { "Idempotency-Key": `ts-trigger-${run}` } },
    body: {
      user_id: userId,
      type: "ts_smoke",
      title: "Hello from TypeScript",
      body: "Generated from the OpenAPI document",
      channels: ["push", "in_app"],
    },
  });
  if (error || !data) fail(`POST /v1/notifications ${response.status}`, error);
  if (response.status !== 202 || data.replayed) fail("POST /v1/notifications", `status ${response.status}, replayed ${data.replayed}`);
  const first = data.notifications[0];
  if (!first || first.user_id !== userId) fail("POST /v1/notifications", data);
  notificationId = first.id;
}

// The notification's status, until every delivery is final.
{
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { data, error, response } = await client.GET("/v1/notifications/{id}", {
      params: { path: { id: notificationId } },
    });
    if (error || !data) fail(`GET /v1/notifications/${notificationId} ${response.status}`, error);
    if (data.status === "SENT") {
      const deliveries = data.deliveries ?? [];
      const channels = deliveries.map((d) => d.channel).sort();
      if (channels.join(",") !== "in_app,push") fail("deliveries", deliveries);
      for (const d of deliveries) {
        if (d.state !== "sent") fail(`delivery ${d.id} on ${d.channel}`, d);
      }
      break;
    }
    if (data.status !== "PENDING") fail("notification status", data);
    if (Date.now() > deadline) fail("notification status", `still ${data.status} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// The inbox item.
{
  const { data, error, response } = await client.GET("/v1/users/{id}/inbox", {
    params: { path: { id: userId }, query: { limit: 10 } },
  });
  if (error || !data) fail(`GET /v1/users/${userId}/inbox ${response.status}`, error);
  const item = data.items.find((i) => i.notification_id === notificationId);
  if (!item) fail("inbox", data);
  if (item.title !== "Hello from TypeScript" || data.unread < 1) fail("inbox item", data);
}

console.log(`smoke: user ${userId}: device registered, notification ${notificationId} SENT on push and in_app, inbox item received`);
