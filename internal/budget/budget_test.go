package budget

import (
	"errors"
	"testing"
)

func TestItems(t *testing.T) {
	for _, tc := range []struct {
		in, want int
		ok       bool
	}{{0, DefaultItems, true}, {1, 1, true}, {50, 50, true}, {100, 100, true}, {101, 0, false}, {-1, 0, false}} {
		got, err := Items(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Items(%d) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// The tighter of the page limit and the result limit applies; zero is no
// limit.
func TestBytes(t *testing.T) {
	for _, tc := range []struct{ page, result, want int }{
		{0, 0, 0}, {0, 1 << 20, 1 << 20}, {64 << 10, 0, 64 << 10}, {64 << 10, 1 << 20, 64 << 10}, {2 << 20, 1 << 20, 1 << 20},
	} {
		if got, err := Bytes(tc.page, tc.result); err != nil || got != tc.want {
			t.Errorf("Bytes(%d, %d) = %d, %v; want %d", tc.page, tc.result, got, err, tc.want)
		}
	}
	if _, err := Bytes(-1, 0); err == nil {
		t.Error("a negative page limit accepted")
	}
	if _, err := Bytes(0, -1); err == nil {
		t.Error("a negative result limit accepted")
	}
}

func TestReserve(t *testing.T) {
	if got, want := Reserve(100, 0), len(`],"nextCursor":""}}`)+100; got != want {
		t.Errorf("Reserve(100, 0) = %d, want %d", got, want)
	}
	meta := `"_meta":{"x":1}`
	if got, want := Reserve(100, len(meta)), len(`],"nextCursor":"",`)+100+len(meta)+len(`}}`); got != want {
		t.Errorf("Reserve with meta = %d, want %d", got, want)
	}
}

// A page takes items until its count or its bytes run out; an item that
// cannot fit an empty page is ErrTooLarge, one that does not fit a page
// with items is ErrFull (it starts the next page).
func TestPage(t *testing.T) {
	t.Run("count", func(t *testing.T) {
		p := NewPage(2, 0, 0)
		for i, want := range []error{nil, nil, ErrFull} {
			if err := p.Add(1 << 30); !errors.Is(err, want) {
				t.Fatalf("item %d: %v, want %v", i, err, want)
			}
		}
		if p.Items() != 2 || p.Room() != 0 {
			t.Errorf("items %d room %d", p.Items(), p.Room())
		}
	})
	t.Run("bytes", func(t *testing.T) {
		p := NewPage(100, 1000, 100) // items may end at 900
		if err := p.Add(901); err != ErrTooLarge {
			t.Fatalf("an item over an empty page: %v", err)
		}
		if err := p.Add(900); err != nil {
			t.Fatalf("an item ending at the room: %v", err)
		}
		if err := p.Add(901); err != ErrFull {
			t.Fatalf("an item over a page with items: %v", err)
		}
		if p.Items() != 1 || p.Room() != 99 {
			t.Errorf("items %d room %d", p.Items(), p.Room())
		}
	})
	t.Run("refused elsewhere", func(t *testing.T) {
		p := NewPage(2, 0, 0)
		if err := p.Refuse(); err != ErrTooLarge {
			t.Fatalf("refused on an empty page: %v", err)
		}
		_ = p.Add(0)
		if err := p.Refuse(); err != ErrFull {
			t.Fatalf("refused on a page with items: %v", err)
		}
	})
	t.Run("zero page", func(t *testing.T) {
		var p Page
		if err := p.Add(0); err != ErrFull {
			t.Fatalf("the zero Page took an item: %v", err)
		}
		if err := p.Refuse(); err != ErrFull {
			t.Fatalf("the zero Page: %v", err)
		}
	})
}

// FuzzPage: whatever the sizes of the items offered, a page takes a
// prefix of them within its item and byte budgets, refuses only the item
// that ends it, and calls ErrTooLarge exactly the first item that cannot
// fit an empty page.
func FuzzPage(f *testing.F) {
	f.Add(50, 1000, 100, []byte{10, 20, 30})
	f.Add(2, 100, 10, []byte{200})
	f.Add(0, 0, 0, []byte{1, 2})
	f.Add(100, 300, 280, []byte{5, 5, 5, 5, 5})
	f.Fuzz(func(t *testing.T, items, limit, reserve int, sizes []byte) {
		items, limit, reserve = items%200, limit%(1<<20), reserve%(1<<16)
		if limit < 0 || reserve < 0 {
			return
		}
		p := NewPage(items, limit, reserve)
		taken := fill(t, &p, items, limit, reserve, sizes)
		if p.Items() != taken {
			t.Fatalf("Items %d, took %d", p.Items(), taken)
		}
	})
}

// fill offers items of sizes to p until it refuses one, checks each
// answer against the budget, and returns how many it took.
func fill(t *testing.T, p *Page, items, limit, reserve int, sizes []byte) int {
	fits := func(end int) bool { return limit == 0 || end <= limit-reserve }
	end, taken := 0, 0
	for i, s := range sizes {
		next := end + int(s)
		switch err := p.Add(next); {
		case err == nil:
			end, taken = next, taken+1
			if taken > max(items, 0) || !fits(end) {
				t.Fatalf("took item %d past the budget (items %d, end %d, room %d)", i, taken, end, limit-reserve)
			}
			continue
		case err == ErrTooLarge:
			if taken != 0 || fits(next) || items <= 0 {
				t.Fatalf("ErrTooLarge for item %d of size %d after %d items", i, s, taken)
			}
		case err == ErrFull:
			if taken < items && fits(next) || taken == 0 && items > 0 {
				t.Fatalf("ErrFull for item %d of size %d that fits (taken %d)", i, s, taken)
			}
			if taken == items && p.Add(0) == nil {
				t.Fatal("a full page took another item")
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
		break
	}
	return taken
}

// BenchmarkPage fills pages of 50 items of 100 bytes under a 1 MiB
// limit: the cost of the budget per item.
func BenchmarkPage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		p := NewPage(DefaultItems, 1<<20, Reserve(400, 0))
		end := 64
		for p.Add(end+100) == nil {
			end += 100
		}
	}
}
