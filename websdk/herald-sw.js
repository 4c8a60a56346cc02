// Herald web SDK v1: the service worker part of Web Push. Use it from your
// own worker on your page's origin (a worker must be served by the page's
// origin):
//
//   importScripts("https://herald.example.com/sdk/v1/herald-sw.js");
//
// It shows each of Herald's pushes once (its messageId is the
// notification's tag, and a messageId already shown is dropped), reports
// opened, clicked and dismissed receipts to Herald, opens data.url on a
// click, and asks the page to register again when the browser replaces
// the subscription. A worker with pushes of its own can call
// self.herald.push(payload) from its own push handler instead.
/* eslint-env serviceworker */
(() => {
  const dbName = "herald-sw";
  const keep = 200; // messageIds remembered for de-duplication

  // A tiny IndexedDB key-value store: the worker may be stopped between
  // events, so what it must remember lives there.
  function db() {
    return new Promise((resolve, reject) => {
      const r = indexedDB.open(dbName, 1);
      r.onupgradeneeded = () => r.result.createObjectStore("kv");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  }
  async function get(key) {
    const d = await db();
    return new Promise((resolve, reject) => {
      const r = d.transaction("kv").objectStore("kv").get(key);
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
  }
  async function put(key, value) {
    const d = await db();
    return new Promise((resolve, reject) => {
      const t = d.transaction("kv", "readwrite");
      t.objectStore("kv").put(value, key);
      t.oncomplete = () => resolve();
      t.onerror = () => reject(t.error);
    });
  }

  // seen records messageId and reports whether it was there already.
  async function seen(messageId) {
    const ids = (await get("shown")) || [];
    if (ids.includes(messageId)) return true;
    ids.push(messageId);
    await put("shown", ids.slice(-keep));
    return false;
  }

  // receipt sends one receipt with the token the page last gave, or keeps
  // it for the next time the page gives one.
  async function receipt(messageId, event, action) {
    if (!messageId) return;
    const r = { message_id: messageId, event, at: new Date().toISOString() };
    if (action) r.action = action;
    const pending = ((await get("pending")) || []).concat([r]);
    await put("pending", pending.slice(-100));
    await flush();
  }

  async function flush() {
    const cfg = await get("config");
    const pending = (await get("pending")) || [];
    if (!cfg || !pending.length) return;
    const headers = { "Content-Type": "application/json" };
    if (cfg.token) headers.Authorization = `Bearer ${cfg.token}`;
    let res;
    try {
      res = await fetch(`${cfg.server}/v1/receipts`, { method: "POST", headers, body: JSON.stringify({ receipts: pending }) });
    } catch {
      return; // offline: kept for the next flush
    }
    if (res.status === 401) {
      for (const c of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
        c.postMessage({ herald: "token-expired" });
      }
      return;
    }
    // Recorded, duplicate or refused as malformed: sending again would
    // not change the answer.
    if (res.status < 500 && res.status !== 429) await put("pending", []);
  }

  async function push(p) {
    if (!p || !p.messageId) return;
    if (await seen(p.messageId)) return;
    await self.registration.showNotification(p.title || "", {
      body: p.body || "",
      tag: p.messageId,
      data: { messageId: p.messageId, type: p.type || "", data: p.data || {} },
    });
  }

  async function click(notification, action) {
    const d = notification.data || {};
    notification.close();
    await receipt(d.messageId, action ? "clicked" : "opened", action);
    const url = d.data && d.data.url;
    if (url) {
      const target = new URL(url, self.location.origin).href;
      const wins = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const open = wins.find((w) => w.url === target);
      if (open) await open.focus();
      else await self.clients.openWindow(target);
    }
  }

  async function dismissed(notification) {
    await receipt((notification.data || {}).messageId, "dismissed");
  }

  async function config(cfg) {
    await put("config", { server: cfg.server, token: cfg.token || "" });
    await flush();
  }

  self.herald = { push, click, dismissed, config, flush };

  self.addEventListener("push", (e) => {
    let p = null;
    try { p = e.data && e.data.json(); } catch { return; }
    if (p && p.messageId) e.waitUntil(push(p));
  });
  self.addEventListener("notificationclick", (e) => e.waitUntil(click(e.notification, e.action)));
  self.addEventListener("notificationclose", (e) => e.waitUntil(dismissed(e.notification)));
  self.addEventListener("message", (e) => {
    if (e.data && e.data.herald === "config") e.waitUntil(config(e.data));
  });
  self.addEventListener("pushsubscriptionchange", (e) => {
    e.waitUntil((async () => {
      if (e.oldSubscription && e.oldSubscription.options) {
        try { await self.registration.pushManager.subscribe(e.oldSubscription.options); } catch { /* the page subscribes */ }
      }
      for (const c of await self.clients.matchAll({ type: "window", includeUncontrolled: true })) {
        c.postMessage({ herald: "subscription-changed" });
      }
    })());
  });
})();
