package recommend_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	recommendemu "github.com/heraldhq/herald/emulator/recommend"
)

func post(t *testing.T, url, contentType, body string) (int, recommendemu.Answer) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ans recommendemu.Answer
	if resp.StatusCode == 200 {
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, ans
}

// The emulator answers a campaign fetch's shape, the same picks for a user
// every time; faults fail a campaign's calls, then let them through; the
// stats count what it answered.
func TestFetchFaultsStats(t *testing.T) {
	t.Parallel()
	e := recommendemu.New(recommendemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	url := e.FetchURL()
	body := `{"campaign":"daily-reco","run":"manual-1","user_ids":["user-1842","user-2077"]}`
	code, ans := post(t, url, "application/json", body)
	if code != 200 || len(ans.Users) != 2 || len(ans.Users["user-1842"].Items) != 3 || ans.Users["user-1842"].Items[0].Name == "" {
		t.Fatalf("fetch: %d %+v", code, ans)
	}
	if _, again := post(t, url, "application/json", body); again.Users["user-1842"].Items[0] != ans.Users["user-1842"].Items[0] {
		t.Error("a user's picks changed between calls")
	}
	if err := e.FailCampaign("daily-reco", recommendemu.CampaignFault{Status: 503, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if code, _ := post(t, url, "application/json", body); code != 503 {
		t.Errorf("faulted call: %d, want 503", code)
	}
	if code, _ := post(t, url, "application/json", body); code != 200 {
		t.Errorf("call after the fault's one time: %d, want 200", code)
	}
	if err := e.SetFaults(recommendemu.Faults{OmitUsers: []string{"user-2077"}}); err != nil {
		t.Fatal(err)
	}
	if _, ans := post(t, url, "application/json", body); len(ans.Users) != 1 {
		t.Errorf("omit_users: answered %v", ans.Users)
	}
	for _, bad := range []struct{ ct, body string }{
		{"text/plain", body},
		{"application/json", `{"campaign":"x"}`},
		{"application/json", `{"campaign":"x","user_ids":["a"],"extra":1}`},
	} {
		if code, _ := post(t, url, bad.ct, bad.body); code/100 != 4 {
			t.Errorf("%s %s: %d, want a 4xx", bad.ct, bad.body, code)
		}
	}
	st := e.Stats()
	if st.Accepted != 4 || st.Rejected[503] != 1 || st.Rejected[400] != 2 || st.Rejected[415] != 1 ||
		st.UsersAnswered != 7 || st.UsersOmitted != 1 {
		t.Errorf("stats = %+v", st)
	}
	if got := len(e.MessagesTo("daily-reco")); got != 5 {
		t.Errorf("recorded %d calls of daily-reco, want 5", got)
	}
}

// The control routes every emulator serves work here too.
func TestControlRoutes(t *testing.T) {
	t.Parallel()
	e := recommendemu.New(recommendemu.Config{})
	if _, err := e.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	req, _ := http.NewRequest("PUT", e.URL()+"/emulator/faults", strings.NewReader(`{"campaigns":{"daily-reco":{"status":200}}}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("a fault with status 200: %d, want 400", resp.StatusCode)
	}
	req, _ = http.NewRequest("PUT", e.URL()+"/emulator/users/user-1842",
		bytes.NewReader([]byte(`{"items":[{"id":"p-1","name":"Kettle","price":8500}],"fields":{"tier":"gold"}}`)))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := e.Content("user-1842"); resp.StatusCode != 204 || len(c.Items) != 1 || c.Items[0].Name != "Kettle" || c.Fields["tier"] != "gold" {
		t.Errorf("PUT /emulator/users: %d, content %+v", resp.StatusCode, c)
	}
	for _, path := range []string{"/emulator/messages", "/emulator/faults", "/emulator/stats"} {
		resp, err := http.Get(e.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}
