package emulator

import (
	"slices"
	"sync"
	"testing"
)

func TestRecorderKeepsNewestInOrder(t *testing.T) {
	t.Parallel()
	r := NewRecorder[int](3)
	if got := r.All(); len(got) != 0 {
		t.Fatalf("All on empty = %v", got)
	}
	for i := 1; i <= 5; i++ {
		r.Record(i)
	}
	if got, want := r.All(), []int{3, 4, 5}; !slices.Equal(got, want) {
		t.Fatalf("All = %v, want %v (oldest dropped, oldest first)", got, want)
	}
	if got, want := r.Where(func(v int) bool { return v%2 == 1 }), []int{3, 5}; !slices.Equal(got, want) {
		t.Fatalf("Where(odd) = %v, want %v", got, want)
	}
	if got := r.Where(func(int) bool { return false }); got != nil {
		t.Fatalf("Where(none) = %v, want nil", got)
	}
	r.Reset()
	r.Record(9)
	if got, want := r.All(), []int{9}; !slices.Equal(got, want) {
		t.Fatalf("All after Reset = %v, want %v", got, want)
	}
}

func TestRecorderUpdate(t *testing.T) {
	t.Parallel()
	type msg struct{ id, status string }
	r := NewRecorder[msg](10)
	r.Record(msg{"a", "queued"})
	r.Record(msg{"b", "queued"})
	set := func(id string) func(*msg) bool {
		return func(m *msg) bool {
			if m.id != id {
				return false
			}
			m.status = "delivered"
			return true
		}
	}
	if !r.Update(set("b")) {
		t.Fatal("Update(b) = false, want true")
	}
	if r.Update(set("zz")) {
		t.Fatal("Update(unknown) = true, want false")
	}
	if got, want := r.All(), []msg{{"a", "queued"}, {"b", "delivered"}}; !slices.Equal(got, want) {
		t.Fatalf("All = %v, want %v", got, want)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	t.Parallel()
	r := NewRecorder[int](50)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				r.Record(g*100 + i)
				_ = r.All()
			}
		})
	}
	wg.Wait()
	if n := len(r.All()); n != 50 {
		t.Fatalf("kept %d messages, want the bound 50", n)
	}
}

func TestNewRecorderRejectsNonPositiveBound(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Fatal("NewRecorder(0) did not panic")
		}
	}()
	NewRecorder[int](0)
}
