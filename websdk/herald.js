// Herald web SDK, v1: the in-app inbox as a <herald-inbox> element and
// Web Push registration, as one ES module with no dependencies.
//
//   <script type="module" src="https://herald.example.com/sdk/v1/herald.js"></script>
//   <herald-inbox server="https://herald.example.com" user="alice"></herald-inbox>
//   document.querySelector("herald-inbox").getToken = () => fetchMyHeraldToken();
//
// Served by Herald at /sdk/v1/; GET /sdk/integrity names the pinned URL and
// its Subresource Integrity hash.

export const version = "1";

const backoffBase = 500; // ms: the first reconnect waits about this long
const backoffMax = 30000; // ms: and no reconnect waits longer
const wsFailuresBeforeSSE = 2; // WebSocket opens that fail before falling back to SSE

// HeraldClient calls Herald's inbox API for one user with a user token.
// getToken is the page's callback returning a fresh token (a string, or a
// promise of one); it is called first, and again whenever Herald says the
// token expired. An empty token sends no credential (serve --dev).
export class HeraldClient {
  constructor({ server = "", user, token = null, getToken = null, fetch: f = null } = {}) {
    if (!user) throw new Error("herald: user is required");
    this.server = String(server).replace(/\/+$/, "");
    this.user = user;
    this._token = token;
    this._getToken = getToken;
    this._fetch = f || globalThis.fetch.bind(globalThis);
    this._refreshing = null;
  }

  // token returns the current token, asking the page's callback when there
  // is none or when fresh is true (one call at a time).
  async token(fresh = false) {
    if (this._token != null && !fresh && !expiresSoon(this._token)) return this._token;
    if (!this._getToken) return this._token || "";
    if (!this._refreshing) {
      this._refreshing = Promise.resolve()
        .then(() => this._getToken())
        .then((t) => { this._token = t || ""; return this._token; })
        .finally(() => { this._refreshing = null; });
    }
    return this._refreshing;
  }

  userPath(rest = "") {
    return `${this.server}/v1/users/${encodeURIComponent(this.user)}${rest}`;
  }

  // request sends one API call; a 401 asks the page for a new token and
  // tries once more.
  async request(method, url, body) {
    for (let attempt = 0; ; attempt++) {
      const token = await this.token(attempt > 0);
      const headers = {};
      if (token) headers.Authorization = `Bearer ${token}`;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const res = await this._fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (res.status === 401 && attempt === 0 && this._getToken) continue;
      const text = await res.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch { /* a proxy's page, not Herald's answer */ }
      if (!res.ok) {
        const err = new Error((data && data.message) || `HTTP ${res.status}`);
        err.status = res.status;
        err.code = data && data.code;
        throw err;
      }
      return data;
    }
  }

  listInbox({ cursor = "", limit = 20, archived = false } = {}) {
    const q = new URLSearchParams({ limit: String(limit) });
    if (cursor) q.set("cursor", cursor);
    if (archived) q.set("archived", "true");
    return this.request("GET", this.userPath(`/inbox?${q}`));
  }
  markRead(ids) { return this.request("POST", this.userPath("/inbox/read"), { ids }); }
  markAllRead() { return this.request("POST", this.userPath("/inbox/read-all")); }
  markSeen(ids) { return this.request("POST", this.userPath("/inbox/seen"), { ids }); }
  archive(id) { return this.request("POST", this.userPath(`/inbox/${id}/archive`)); }
  click(id, action) { return this.request("POST", this.userPath(`/inbox/${id}/click`), action ? { action } : {}); }
  receipts(receipts) { return this.request("POST", `${this.server}/v1/receipts`, { receipts }); }

  // stream opens the live inbox: items after `after`, then each new one.
  // It reconnects with backoff and resumes after the last item it
  // delivered, over a WebSocket, or Server-Sent Events where a WebSocket
  // does not get through. Handlers: item(item), state({unread, unseen}),
  // status("live" | "connecting" | "offline"). Returns {close()}.
  stream({ after = 0, item = () => {}, state = () => {}, status = () => {} } = {}) {
    return new InboxStream(this, after, { item, state, status });
  }
}

// InboxStream is one live subscription; see HeraldClient.stream.
class InboxStream {
  constructor(client, after, handlers) {
    this.client = client;
    this.last = after;
    this.h = handlers;
    this.failures = 0; // consecutive failed connections, for the backoff
    this.wsFailures = 0;
    this.useSSE = typeof WebSocket === "undefined";
    this.closed = false;
    this.conn = null;
    this.timer = null;
    this.gen = 0; // bumped by each connect, so a superseded one stops
    this._online = () => this.reconnectNow();
    this._offline = () => this.h.status("offline");
    if (typeof window !== "undefined") {
      window.addEventListener("online", this._online);
      window.addEventListener("offline", this._offline);
    }
    this.connect();
  }

  close() {
    this.closed = true;
    this.gen++;
    clearTimeout(this.timer);
    this.drop();
    if (typeof window !== "undefined") {
      window.removeEventListener("online", this._online);
      window.removeEventListener("offline", this._offline);
    }
  }

  drop() {
    const c = this.conn;
    this.conn = null;
    if (c) c.close();
  }

  reconnectNow() {
    if (this.closed) return;
    this.gen++;
    clearTimeout(this.timer);
    this.drop();
    this.failures = 0;
    this.connect();
  }

  // deliver hands each item on once, in id order: a resumed stream never
  // repeats an item (it starts after the last id), and this guard holds
  // even if a connection's events overlap an older one's.
  deliver(item) {
    if (!item || typeof item.id !== "number" || item.id <= this.last) return;
    this.last = item.id;
    this.h.item(item);
  }

  event(name, data) {
    if (name === "inbox") this.deliver(data);
    else if (name === "state") this.h.state(data);
    else if (name === "close") this.closing = data && data.reason;
    // Later versions may add events: skip the others.
  }

  async connect() {
    if (this.closed) return;
    const gen = ++this.gen;
    this.h.status("connecting");
    this.closing = "";
    let token;
    try {
      token = await this.client.token(this.needToken === true);
    } catch (e) {
      if (gen === this.gen) this.retry();
      return;
    }
    if (this.closed || gen !== this.gen) return;
    this.needToken = false;
    const q = new URLSearchParams();
    if (token) q.set("access_token", token);
    // Always a resume point, 0 included: without one the stream would
    // start at the next new item and miss those sent since the list
    // was read.
    q.set("last_event_id", String(this.last));
    const path = this.client.userPath(this.useSSE ? "/inbox/stream" : "/inbox/ws");
    const url = `${path}?${q}`;
    if (this.useSSE) this.openSSE(url);
    else this.openWS(url);
  }

  opened() {
    this.failures = 0;
    this.wsFailures = 0;
    this.h.status("live");
  }

  // ended decides what a closed connection means: a token that expired is
  // refreshed through the page's callback; anything else reconnects
  // after a backoff, resuming after the last item.
  ended(wasOpen, code) {
    if (this.closed) return;
    this.conn = null;
    if (this.closing === "credentials_expired" || code === 4001) {
      this.needToken = true;
      this.failures = 0;
    } else if (this.closing === "credentials_revoked" || code === 4003) {
      this.h.status("offline");
      return;
    }
    // A WebSocket that never opens may be a proxy that refuses upgrades:
    // after two, try Server-Sent Events; after an SSE failure, WebSocket
    // again (a network that was down fails both).
    if (!wasOpen && this.useSSE && typeof WebSocket !== "undefined") {
      this.useSSE = false;
      this.wsFailures = 0;
    } else if (!wasOpen && !this.useSSE && ++this.wsFailures >= wsFailuresBeforeSSE) {
      this.useSSE = true;
    }
    // A browser does not say why a stream could not open; a token the
    // server no longer takes is one reason, so the first retry asks anew.
    if (!wasOpen && this.failures <= 1) this.needToken = true;
    this.retry();
  }

  retry() {
    if (this.closed) return;
    const n = this.failures++;
    const wait = n === 0 ? 0 : Math.min(backoffMax, backoffBase * 2 ** (n - 1)) * (0.5 + Math.random() / 2);
    this.h.status(typeof navigator !== "undefined" && navigator.onLine === false ? "offline" : "connecting");
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), wait);
  }

  openWS(url) {
    const u = new URL(url, typeof location !== "undefined" ? location.href : undefined);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(u.href);
    let open = false;
    this.conn = ws;
    ws.onopen = () => { open = true; this.opened(); };
    ws.onmessage = (m) => {
      if (this.conn !== ws) return;
      let msg;
      try { msg = JSON.parse(m.data); } catch { return; }
      this.event(msg.event, msg.data);
    };
    ws.onclose = (e) => { if (this.conn === ws) this.ended(open, e.code); };
  }

  openSSE(url) {
    const es = new EventSource(url);
    let open = false;
    const conn = { close: () => es.close() };
    this.conn = conn;
    es.onopen = () => { open = true; this.opened(); };
    for (const name of ["inbox", "state", "close"]) {
      es.addEventListener(name, (m) => {
        if (this.conn !== conn) return;
        let data;
        try { data = JSON.parse(m.data); } catch { return; }
        this.event(name, data);
      });
    }
    // EventSource would reconnect by itself with the same token; this
    // stream reconnects itself instead, so a refreshed token is used.
    es.onerror = () => {
      es.close();
      if (this.conn === conn) this.ended(open, 0);
    };
  }
}

// The strings the inbox shows; replace any through the element's strings
// property (inbox.strings = {title: "Benachrichtigungen"}).
export const defaultStrings = {
  title: "Notifications",
  unreadBadge: (n) => (n === 1 ? "1 unread notification" : `${n} unread notifications`),
  markRead: "Mark read",
  markAllRead: "Mark all read",
  archive: "Archive",
  unread: "Unread",
  loadMore: "Load more",
  loading: "Loading notifications…",
  empty: "You have no notifications.",
  error: "Notifications could not be loaded.",
  retry: "Try again",
  offline: "Offline. New notifications will appear when the connection is back.",
  reconnecting: "Reconnecting…",
  newItem: (item) => `New notification: ${item.title || ""}`,
  itemLabel: (item) => item.title || item.type,
  time: (d) => d.toLocaleString(),
};

const css = `
:host { display: block; font: var(--herald-font, inherit); color: var(--herald-fg, #1f2328);
  background: var(--herald-bg, #fff); border: 1px solid var(--herald-border, #d0d7de);
  border-radius: var(--herald-radius, 8px); max-width: 100%; }
header { display: flex; align-items: center; gap: .5rem; padding: .75rem 1rem;
  border-bottom: 1px solid var(--herald-border, #d0d7de); flex-wrap: wrap; }
h2 { font-size: 1rem; margin: 0; flex: 1; }
.badge { background: var(--herald-accent, #0b5cad); color: var(--herald-accent-fg, #fff);
  border-radius: 999px; padding: 0 .5rem; font-size: .8rem; min-width: 1.2rem; text-align: center; }
.badge[hidden] { display: none; }
ul { list-style: none; margin: 0; padding: 0; }
li { padding: .75rem 1rem; border-bottom: 1px solid var(--herald-border, #d0d7de); }
li.unread { background: var(--herald-unread-bg, #eef5fc); }
.open { all: unset; cursor: pointer; display: block; width: 100%; }
.item-title { font-weight: 600; overflow-wrap: anywhere; }
.item-body { margin: .25rem 0; overflow-wrap: anywhere; }
time, .note { color: var(--herald-muted, #57606a); font-size: .85rem; }
.actions { display: flex; gap: .5rem; margin-top: .4rem; flex-wrap: wrap; }
button { font: inherit; color: var(--herald-accent, #0b5cad); background: transparent;
  border: 1px solid var(--herald-border, #d0d7de); border-radius: var(--herald-radius, 8px); padding: .2rem .6rem; cursor: pointer; }
button:focus-visible, .open:focus-visible { outline: 2px solid var(--herald-focus, #0b5cad); outline-offset: 2px; }
.state { padding: 1rem; }
.banner { padding: .5rem 1rem; background: var(--herald-warning-bg, #fff8c5); color: var(--herald-warning-fg, #3b2300); }
.banner[hidden], .more[hidden] { display: none; }
.more { padding: .75rem 1rem; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

// HeraldInbox is <herald-inbox server="…" user="…" page-size="20">. It
// starts when it has a way to authenticate: set getToken (a callback
// returning a user token), token, or call start() (serve --dev needs no
// token). Events: herald-item-click (detail: the item), herald-error.
export class HeraldInbox extends HTMLElement {
  constructor() {
    super();
    this.items = new Map(); // id → item, the loaded ones
    this.order = []; // ids, newest first
    this.unread = 0;
    this.cursor = "";
    this._strings = defaultStrings;
    this._getToken = null;
    this._token = null;
    this._started = false;
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = `<style>${css}</style>
<section part="container">
  <header part="header"><h2 id="title"></h2><span class="badge" part="badge" hidden></span>
    <button type="button" class="read-all" part="button"></button></header>
  <div class="banner" part="banner" role="status" hidden></div>
  <div class="state" part="state"></div>
  <ul part="list"></ul>
  <div class="more" hidden><button type="button" part="button"></button></div>
  <div class="sr" role="status" aria-live="polite"></div>
</section>`;
    this.$ = (s) => root.querySelector(s);
    this.$("section").setAttribute("aria-labelledby", "title");
    this.$(".read-all").addEventListener("click", () => this.markAllRead());
    this.$(".more button").addEventListener("click", () => this.loadMore());
    this.renderChrome();
  }

  static get observedAttributes() { return ["server", "user"]; }
  attributeChangedCallback() { if (this._started) this.restart(); }

  set getToken(fn) { this._getToken = fn; this.maybeStart(); }
  get getToken() { return this._getToken; }
  set token(t) { this._token = t; if (this.client) this.client._token = t; this.maybeStart(); }
  get token() { return this._token; }
  set strings(s) {
    this._strings = { ...defaultStrings, ...s };
    this.renderChrome();
    this.renderList();
    if (this.state !== undefined) this.setState(this.state);
  }
  get strings() { return this._strings; }

  connectedCallback() {
    // A page may set these before herald.js defined the element: take
    // them over from the plain properties they became.
    for (const k of ["strings", "token", "getToken"]) {
      if (Object.prototype.hasOwnProperty.call(this, k)) {
        const v = this[k];
        delete this[k];
        this[k] = v;
      }
    }
    this.maybeStart();
  }
  disconnectedCallback() { this.stop(); }

  maybeStart() {
    if (this.isConnected && !this._started && (this._getToken || this._token != null)) this.start();
  }

  start() {
    if (this._started) return;
    this._started = true;
    this.client = new HeraldClient({ server: this.getAttribute("server") || "", user: this.getAttribute("user"),
      token: this._token, getToken: this._getToken });
    this.load();
  }

  stop() {
    this._started = false;
    if (this.live) this.live.close();
    this.live = null;
  }

  restart() { this.stop(); this.items.clear(); this.order = []; this.start(); }

  get pageSize() { return Math.min(200, Math.max(1, Number(this.getAttribute("page-size")) || 20)); }

  async load() {
    this.setState("loading");
    try {
      const page = await this.client.listInbox({ limit: this.pageSize });
      this.items.clear();
      this.order = [];
      this.add(page.items);
      this.cursor = page.next_cursor || "";
      this.setUnread(page.unread);
      this.setState(this.order.length ? "" : "empty");
      this.renderList();
      // The stream resumes after the newest item Herald has for the user,
      // so nothing sent since this read is missed: the newest live item,
      // or with none, the newest archived one.
      let after = this.order.length ? Math.max(...this.order) : 0;
      if (!after) {
        const archived = await this.client.listInbox({ limit: 1, archived: true });
        after = archived.items.length ? archived.items[0].id : 0;
      }
      if (!this.live) {
        this.live = this.client.stream({ after,
          item: (it) => this.arrived(it),
          state: (s) => this.stateChanged(s),
          status: (st) => this.connection(st) });
      }
      this.markShownSeen();
    } catch (e) {
      this.failed(e);
    }
  }

  async loadMore() {
    if (!this.cursor) return;
    try {
      const page = await this.client.listInbox({ limit: this.pageSize, cursor: this.cursor });
      this.add(page.items);
      this.cursor = page.next_cursor || "";
      this.renderList();
    } catch (e) {
      this.failed(e, true);
    }
  }

  add(items) {
    for (const it of items) {
      if (!this.items.has(it.id)) this.order.push(it.id);
      this.items.set(it.id, it);
    }
    this.order.sort((a, b) => b - a);
  }

  arrived(item) {
    if (this.items.has(item.id) || item.archived_at) return;
    this.add([item]);
    if (!item.read_at) this.setUnread(this.unread + 1);
    this.setState("");
    this.renderList();
    this.announce(this._strings.newItem(item));
    this.markShownSeen();
  }

  // stateChanged keeps the badge, and when another tab or device changed
  // read state (the count differs from what this list shows), reads the
  // loaded items again so each shows its state.
  stateChanged(s) {
    const changed = s.unread !== this.unread;
    this.setUnread(s.unread);
    if (changed && !this.syncing) this.sync();
  }

  async sync() {
    this.syncing = true;
    try {
      const n = Math.min(200, Math.max(this.pageSize, this.order.length));
      const page = await this.client.listInbox({ limit: n });
      const fresh = new Map(page.items.map((it) => [it.id, it]));
      const oldest = page.items.length ? page.items[page.items.length - 1].id : Infinity;
      for (const id of [...this.order]) {
        if (fresh.has(id)) this.items.set(id, fresh.get(id));
        else if (id >= oldest || !page.next_cursor) this.remove(id); // archived elsewhere
      }
      this.setUnread(page.unread);
      this.renderList();
    } catch {
      // The next state event tries again.
    } finally {
      this.syncing = false;
    }
  }

  remove(id) {
    this.items.delete(id);
    this.order = this.order.filter((x) => x !== id);
  }

  connection(st) {
    const b = this.$(".banner");
    b.hidden = st === "live";
    if (st === "offline") b.textContent = this._strings.offline;
    else if (st === "connecting" && this._everLive) b.textContent = this._strings.reconnecting;
    else b.hidden = true;
    if (st === "live") this._everLive = true;
    this.setAttribute("connection", st);
  }

  async markRead(id) {
    const it = this.items.get(id);
    if (!it || it.read_at) return;
    it.read_at = new Date().toISOString();
    this.setUnread(Math.max(0, this.unread - 1));
    this.renderList();
    try { await this.client.markRead([id]); } catch (e) { this.failed(e, true); }
  }

  async markAllRead() {
    const now = new Date().toISOString();
    for (const it of this.items.values()) if (!it.read_at) it.read_at = now;
    this.setUnread(0);
    this.renderList();
    try { await this.client.markAllRead(); } catch (e) { this.failed(e, true); }
  }

  async archive(id) {
    const it = this.items.get(id);
    if (!it) return;
    const idx = this.order.indexOf(id);
    this.remove(id);
    if (!it.read_at) this.setUnread(Math.max(0, this.unread - 1));
    this.renderList(idx);
    if (!this.order.length) this.setState("empty");
    try { await this.client.archive(id); } catch (e) { this.failed(e, true); }
  }

  async open(id) {
    const it = this.items.get(id);
    if (!it) return;
    this.dispatchEvent(new CustomEvent("herald-item-click", { detail: it, bubbles: true, composed: true }));
    if (!it.read_at) {
      it.read_at = new Date().toISOString();
      this.setUnread(Math.max(0, this.unread - 1));
      this.renderList();
    }
    try { await this.client.click(id); } catch (e) { this.failed(e, true); }
  }

  // markShownSeen tells Herald the items on screen were seen (the
  // "unseen" count), once each, when the page is visible.
  markShownSeen() {
    if (typeof document !== "undefined" && document.visibilityState === "hidden") return;
    const ids = this.order.filter((id) => !this.items.get(id).seen_at).slice(0, 1000);
    if (!ids.length) return;
    const now = new Date().toISOString();
    for (const id of ids) this.items.get(id).seen_at = now;
    this.client.markSeen(ids).catch(() => {});
  }

  failed(e, keepList = false) {
    this.dispatchEvent(new CustomEvent("herald-error", { detail: e, bubbles: true, composed: true }));
    if (!keepList) this.setState("error");
    else this.announce(this._strings.error);
  }

  setUnread(n) {
    this.unread = n;
    const b = this.$(".badge");
    b.hidden = n === 0;
    b.textContent = n > 999 ? "999+" : String(n);
    b.setAttribute("aria-label", this._strings.unreadBadge(n));
    b.setAttribute("role", "status");
    this.$(".read-all").disabled = n === 0;
    this.setAttribute("unread", String(n));
  }

  setState(st) {
    this.state = st;
    const el = this.$(".state");
    el.replaceChildren();
    el.hidden = !st;
    if (st === "loading") el.textContent = this._strings.loading;
    else if (st === "empty") el.textContent = this._strings.empty;
    else if (st === "error") {
      const p = document.createElement("p");
      p.setAttribute("role", "alert");
      p.textContent = this._strings.error;
      const retry = document.createElement("button");
      retry.type = "button";
      retry.textContent = this._strings.retry;
      retry.addEventListener("click", () => this.load());
      el.append(p, retry);
    }
    this.setAttribute("state", st || "ready");
  }

  announce(text) {
    const r = this.$(".sr[role=status]");
    r.textContent = "";
    setTimeout(() => { r.textContent = text; }, 50);
  }

  renderChrome() {
    const s = this._strings;
    this.$("#title").textContent = s.title;
    this.$(".read-all").textContent = s.markAllRead;
    this.$(".more button").textContent = s.loadMore;
    if (this.unread !== undefined) this.setUnread(this.unread);
  }

  // renderList draws the loaded items; focusAt keeps keyboard focus near
  // an item that went away (archive) instead of dropping it to the page.
  renderList(focusAt) {
    const s = this._strings;
    const ul = this.$("ul");
    ul.setAttribute("aria-labelledby", "title");
    ul.replaceChildren(...this.order.map((id) => {
      const it = this.items.get(id);
      const li = document.createElement("li");
      li.dataset.id = String(id);
      li.setAttribute("part", it.read_at ? "item" : "item unread");
      if (!it.read_at) li.className = "unread";
      const open = document.createElement("button");
      open.type = "button";
      open.className = "open";
      const title = document.createElement("span");
      title.className = "item-title";
      title.textContent = s.itemLabel(it);
      open.append(title);
      if (!it.read_at) {
        const u = document.createElement("span");
        u.className = "sr";
        u.textContent = ` (${s.unread})`;
        open.append(u);
      }
      open.addEventListener("click", () => this.open(id));
      li.append(open);
      if (it.body) {
        const body = document.createElement("p");
        body.className = "item-body";
        body.textContent = it.body;
        li.append(body);
      }
      const time = document.createElement("time");
      time.dateTime = it.created_at;
      time.textContent = s.time(new Date(it.created_at));
      li.append(time);
      const actions = document.createElement("div");
      actions.className = "actions";
      if (!it.read_at) actions.append(this.button(s.markRead, s.itemLabel(it), "mark-read", () => this.markRead(id)));
      actions.append(this.button(s.archive, s.itemLabel(it), "archive", () => this.archive(id)));
      li.append(actions);
      return li;
    }));
    this.$(".more").hidden = !this.cursor;
    if (focusAt !== undefined) {
      const lis = ul.querySelectorAll("li .open");
      const next = lis[Math.min(focusAt, lis.length - 1)];
      (next || this.$(".read-all")).focus();
    }
  }

  button(text, itemLabel, cls, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = cls;
    b.textContent = text;
    b.setAttribute("aria-label", `${text}: ${itemLabel}`);
    b.addEventListener("click", onClick);
    return b;
  }
}

if (typeof customElements !== "undefined" && !customElements.get("herald-inbox")) {
  customElements.define("herald-inbox", HeraldInbox);
}

// registerWebPush subscribes this browser to Herald's Web Push and
// registers it as the user's web device; call it from a user's click
// (browsers ask for the notification permission only then).
//   serviceWorker: the worker's URL on the page's own origin (a file
//     importing Herald's: importScripts("https://herald…/sdk/v1/herald-sw.js")),
//     or a ServiceWorkerRegistration;
//   server: Herald's URL (default: the page's origin);
//   userToken or getToken: the user's token, as for the inbox;
//   user: the user's id, only where there is no token (serve --dev).
// It re-registers when the browser changed the subscription (checked on
// every call and told by the worker). Resolves to the registered device.
export async function registerWebPush({ serviceWorker, server = "", userToken = null, getToken = null, user = "", deviceId = "" } = {}) {
  if (typeof navigator === "undefined" || !("serviceWorker" in navigator) || typeof PushManager === "undefined") {
    throw new Error("herald: this browser has no Web Push");
  }
  const client = new HeraldClient({ server, user: user || "-", token: userToken, getToken });
  const reg = typeof serviceWorker === "string" ? await navigator.serviceWorker.register(serviceWorker) : serviceWorker;
  if (typeof Notification !== "undefined" && Notification.permission !== "granted") {
    if ((await Notification.requestPermission()) !== "granted") throw new Error("herald: notifications were not allowed");
  }
  const { public_key: key } = await client.request("GET", `${client.server}/v1/webpush/vapid-public-key`);
  const want = base64urlBytes(key);
  let sub = await reg.pushManager.getSubscription();
  if (sub && sub.options && sub.options.applicationServerKey && !sameBytes(new Uint8Array(sub.options.applicationServerKey), want)) {
    await sub.unsubscribe();
    sub = null;
  }
  if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: want });
  const id = deviceId || storedDeviceId();
  const json = sub.toJSON();
  const devices = user ? client.userPath("/devices") : `${client.server}/v1/tokens`;
  const device = await client.request("POST", devices, {
    device_id: id, token: json.endpoint, platform: "web", p256dh: json.keys.p256dh, auth: json.keys.auth });
  // The worker reports opened and clicked receipts with this token, and
  // asks the page to register again when the subscription changes.
  const tell = async () => {
    const w = reg.active || (await navigator.serviceWorker.ready).active;
    if (w) w.postMessage({ herald: "config", server: client.server, token: await client.token() });
  };
  await tell();
  if (!registerWebPush.listening) {
    registerWebPush.listening = true;
    navigator.serviceWorker.addEventListener("message", async (e) => {
      if (!e.data || !e.data.herald) return;
      if (e.data.herald === "subscription-changed") {
        registerWebPush({ serviceWorker: reg, server, userToken, getToken, user, deviceId: id }).catch(() => {});
      } else if (e.data.herald === "token-expired") {
        await client.token(true);
        await tell();
      }
    });
  }
  return device;
}

// expiresSoon reports whether a JWT's exp is less than 5 s away, so the
// token is refreshed before a call rather than after a refusal. A token
// that is no JWT (or has no exp) is used until Herald refuses it.
function expiresSoon(token) {
  const part = String(token).split(".")[1];
  if (!part) return false;
  try {
    const claims = JSON.parse(new TextDecoder().decode(base64urlBytes(part)));
    return typeof claims.exp === "number" && claims.exp * 1000 < Date.now() + 5000;
  } catch {
    return false;
  }
}

function storedDeviceId() {
  const k = "herald.webDeviceId";
  let id = "";
  try { id = localStorage.getItem(k) || ""; } catch { /* storage blocked */ }
  if (!id) {
    const r = new Uint8Array(12);
    crypto.getRandomValues(r);
    id = "web-" + Array.from(r, (b) => b.toString(16).padStart(2, "0")).join("");
    try { localStorage.setItem(k, id); } catch { /* storage blocked */ }
  }
  return id;
}

function base64urlBytes(s) {
  const b = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

function sameBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
