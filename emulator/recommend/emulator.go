package recommend

import (
	"hash/fnv"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/heraldhq/herald/emulator/internal/emulator"
	"github.com/heraldhq/herald/emulator/internal/fault"
)

// Path is where the emulator answers fetches: a campaign's fetch.url is
// the emulator's URL followed by Path.
const Path = "/v1/recommendations"

// MaxUsers bounds the user ids of one request, as the largest batch a
// campaign's fetch sends.
const MaxUsers = 1000

// Config configures an Emulator. The zero value is ready to use.
type Config struct {
	// Items is how many items each user gets; 3 if zero.
	Items int
	// Catalog is what items are picked from; DefaultCatalog if empty.
	Catalog []Item
	// Seed seeds the fault-rate randomness, for reproducible runs. Zero
	// seeds it from the clock.
	Seed uint64
	// MaxRecorded bounds the calls kept (the oldest are dropped); 10,000
	// if zero.
	MaxRecorded int
	// Now is the clock, time.Now if nil.
	Now func() time.Time
	// Logger, if set, logs every call answered (serve --dev uses it).
	Logger *slog.Logger
}

// Item is one recommended product.
type Item struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Price int    `json:"price"`
}

// DefaultCatalog is the catalog an Emulator configured with none picks
// from.
var DefaultCatalog = []Item{
	{ID: "p-1042", Name: "Electric kettle", Price: 39000},
	{ID: "p-2210", Name: "Pour-over dripper", Price: 18000},
	{ID: "p-3307", Name: "Burr grinder", Price: 129000},
	{ID: "p-4120", Name: "Ceramic mug set", Price: 24000},
	{ID: "p-5093", Name: "Digital scale", Price: 32000},
	{ID: "p-6175", Name: "Cold brew bottle", Price: 27000},
	{ID: "p-7731", Name: "Tea infuser", Price: 12000},
	{ID: "p-8802", Name: "Milk frother", Price: 45000},
}

// Request is the body a campaign's fetch POSTs.
type Request struct {
	Campaign string   `json:"campaign"`
	Run      string   `json:"run"`
	UserIDs  []string `json:"user_ids"`
}

// Answer is what the emulator answers: each user's items and fields.
type Answer struct {
	Users map[string]UserContent `json:"users"`
}

// UserContent is one user's items and fields.
type UserContent struct {
	Items  []Item         `json:"items"`
	Fields map[string]any `json:"fields"`
}

// Received is one call the emulator answered, with its HTTP status.
type Received struct {
	Campaign   string    `json:"campaign"`
	Run        string    `json:"run"`
	UserIDs    []string  `json:"user_ids"`
	Status     int       `json:"status"`
	ReceivedAt time.Time `json:"received_at"`
}

// Stats counts what the emulator answered since the last Reset.
type Stats struct {
	// Accepted counts calls answered 200.
	Accepted uint64 `json:"accepted"`
	// Rejected counts calls answered with an error, by HTTP status: an
	// injected fault or a request the emulator refused (400, 405, 413,
	// 415).
	Rejected map[int]uint64 `json:"rejected"`
	// EarlyRetries counts calls for a campaign that arrived before the
	// Retry-After the emulator gave that campaign had passed.
	EarlyRetries uint64 `json:"early_retries"`
	// UsersAnswered counts users given content in accepted calls, and
	// UsersOmitted those an accepted call left out (Faults.OmitUsers).
	UsersAnswered uint64 `json:"users_answered"`
	UsersOmitted  uint64 `json:"users_omitted"`
}

// Emulator is an in-process recommendation service. It is an
// http.Handler; Start serves it on a port. Routes:
//
//	POST   /v1/recommendations               the fetch (Request → Answer)
//	GET    /emulator/messages[?campaign=]    answered calls
//	DELETE /emulator/messages                Reset
//	GET|PUT|DELETE /emulator/faults          fault injection (Faults)
//	PUT|DELETE /emulator/users/{id}          SetUser / ClearUser
//	GET    /emulator/stats                   Stats
type Emulator struct {
	cfg  Config
	mux  *http.ServeMux
	http emulator.Server

	faults                 *fault.Engine[Faults, CampaignFault, int]
	usersAnswered, omitted *fault.Counter
	rec                    *emulator.Recorder[Received]

	mu    sync.Mutex // guards users
	users map[string]UserContent
}

// New returns an Emulator; call Start to serve it, or mount it as an
// http.Handler.
func New(cfg Config) *Emulator {
	if cfg.Items <= 0 {
		cfg.Items = 3
	}
	if len(cfg.Catalog) == 0 {
		cfg.Catalog = DefaultCatalog
	}
	cfg.MaxRecorded, cfg.Now = emulator.Defaults(cfg.MaxRecorded, 10_000, cfg.Now)
	e := &Emulator{cfg: cfg, faults: fault.New(cfg.Seed, faultSpec), users: map[string]UserContent{},
		rec: emulator.NewRecorder[Received](cfg.MaxRecorded)}
	e.usersAnswered, e.omitted = e.faults.Counter(), e.faults.Counter()
	mux := http.NewServeMux()
	mux.HandleFunc(Path, e.handleFetch)
	emulator.Control[Received, Faults, Stats]{Emulator: e, ContentType: jsonContentType, Filter: "campaign"}.Register(mux)
	mux.HandleFunc("PUT /emulator/users/{id}", e.handlePutUser)
	mux.HandleFunc("DELETE /emulator/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		e.ClearUser(r.PathValue("id"))
		w.WriteHeader(http.StatusNoContent)
	})
	e.mux = mux
	return e
}

// ServeHTTP serves the emulator's routes.
func (e *Emulator) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Start listens on addr (":0" picks a free port) and serves in the
// background until Close. It returns the base URL, also given by URL.
func (e *Emulator) Start(addr string) (string, error) {
	return e.http.Listen("recommend", addr, e, nil, nil)
}

// Serve serves on l in the background until Close, and returns the base URL.
func (e *Emulator) Serve(l net.Listener) (string, error) {
	return e.http.Serve("recommend", l, e, nil, nil)
}

// URL is the emulator's base URL ("" before Start or Serve).
func (e *Emulator) URL() string { return e.http.URL() }

// FetchURL is the URL a campaign's fetch.url names ("" before Start).
func (e *Emulator) FetchURL() string {
	if u := e.URL(); u != "" {
		return u + Path
	}
	return ""
}

// Close stops a server started by Start or Serve.
func (e *Emulator) Close() error { return e.http.Close() }

// Messages returns the answered calls, oldest first.
func (e *Emulator) Messages() []Received { return e.rec.All() }

// MessagesTo returns the answered calls of one campaign.
func (e *Emulator) MessagesTo(campaign string) []Received {
	return e.rec.Where(func(m Received) bool { return m.Campaign == campaign })
}

// Stats returns a snapshot of the counters.
func (e *Emulator) Stats() Stats {
	c := e.faults.Counts()
	return Stats{Accepted: c.Accepted, Rejected: c.Rejected, EarlyRetries: c.EarlyRetries,
		UsersAnswered: e.usersAnswered.Load(), UsersOmitted: e.omitted.Load()}
}

// Reset forgets recorded calls and counters. Faults and users set with
// SetUser stay.
func (e *Emulator) Reset() {
	e.rec.Reset()
	e.faults.ResetCounts()
}

// SetUser makes every answer give user this content instead of the picks
// from the catalog.
func (e *Emulator) SetUser(user string, c UserContent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.users[user] = c
}

// ClearUser returns user to the picks from the catalog.
func (e *Emulator) ClearUser(user string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.users, user)
}

// Content is what the emulator answers for user: the content SetUser
// gave, or Config.Items products of the catalog picked by the user id's
// hash, so a user's picks stay the same from run to run.
func (e *Emulator) Content(user string) UserContent {
	e.mu.Lock()
	c, ok := e.users[user]
	e.mu.Unlock()
	if ok {
		return UserContent{Items: slices.Clone(c.Items), Fields: maps.Clone(c.Fields)}
	}
	h := fnv.New32a()
	h.Write([]byte(user)) //nolint:errcheck // a hash never fails.
	cat := e.cfg.Catalog
	start := int(h.Sum32() % uint32(len(cat)))
	n := min(e.cfg.Items, len(cat))
	items := make([]Item, n)
	for i := range n {
		items[i] = cat[(start+i)%len(cat)]
	}
	return UserContent{Items: items, Fields: map[string]any{"reason": "picked for you", "count": n}}
}

// jsonContentType is the Content-Type of the emulator's JSON answers.
const jsonContentType = "application/json"
