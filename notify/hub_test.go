package notify

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// drain returns the events queued on s without waiting, without their
// ids (eventlog_test.go checks those).
func drain(s *Subscription) []Event {
	var out []Event
	for {
		select {
		case e := <-s.Events():
			e.ID = ""
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestDeliveryIsPerSubject(t *testing.T) {
	h := New(Options{})
	defer h.Close()
	alice1, alice2, bob := h.Subscribe("alice"), h.Subscribe("alice"), h.Subscribe("bob")
	anon := h.Subscribe("")
	ctx := context.Background()

	h.ListChanged(ctx, "alice")
	h.ResourceUpdated(ctx, "bob", "docs://documents/1")
	h.ListChanged(ctx, "")                         // no subject: dropped, never broadcast
	h.ResourceUpdated(ctx, "bob", "")              // no URI: dropped
	h.Publish(ctx, Event{Subject: "bob", Kind: 0}) // no kind: dropped

	assert.Equal(t, []Event{{Subject: "alice", Kind: ListChanged}}, drain(alice1))
	assert.Equal(t, []Event{{Subject: "alice", Kind: ListChanged}}, drain(alice2), "every stream of the principal")
	assert.Equal(t, []Event{{Subject: "bob", Kind: ResourceUpdated, URI: "docs://documents/1"}}, drain(bob))
	assert.Empty(t, drain(anon))
	assert.Equal(t, 2, h.Subscribers("alice"))
	alice1.Close()
	alice1.Close() // idempotent
	assert.Equal(t, 1, h.Subscribers("alice"))
}

// TestSlowConsumerIsDropped: a consumer that does not read is ended when its
// queue is full; memory does not grow and other consumers are unaffected.
func TestSlowConsumerIsDropped(t *testing.T) {
	h := New(Options{QueueSize: 4})
	defer h.Close()
	slow, fast := h.Subscribe("alice"), h.Subscribe("alice")
	ctx := context.Background()
	for i := range 10 {
		h.ListChanged(ctx, "alice")
		if i < 4 {
			assert.Len(t, drain(fast), 1)
		} else {
			drain(fast)
		}
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("the slow subscription must have ended")
	}
	assert.True(t, slow.Dropped())
	assert.False(t, fast.Dropped())
	assert.Equal(t, 1, h.Subscribers("alice"))
	assert.LessOrEqual(t, len(slow.Events()), 4, "the queue never grows past its bound")
}

func TestCloseEndsSubscriptions(t *testing.T) {
	h := New(Options{})
	s := h.Subscribe("alice")
	h.Close()
	<-s.Done()
	assert.False(t, s.Dropped())
	after := h.Subscribe("alice")
	<-after.Done() // a closed hub hands out ended subscriptions
	h.ListChanged(context.Background(), "alice")
	h.Close()
}

// TestIsolationProperty: many principals, many streams, random events:
// every stream receives exactly the events addressed to its own subject,
// in order, and nothing else.
func TestIsolationProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	h := New(Options{QueueSize: 10000})
	defer h.Close()
	subjects := make([]string, 40)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("user-%02d", i)
	}
	type stream struct {
		subject string
		sub     *Subscription
	}
	var streams []stream
	for _, s := range subjects {
		for range 1 + rng.IntN(3) {
			streams = append(streams, stream{s, h.Subscribe(s)})
		}
	}
	want := map[string][]Event{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range 4 {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, seed))
			for range 500 {
				e := Event{Subject: subjects[r.IntN(len(subjects))], Kind: ListChanged}
				if r.IntN(2) == 0 {
					e = Event{Subject: e.Subject, Kind: ResourceUpdated, URI: fmt.Sprintf("docs://documents/%d", r.IntN(9))}
				}
				mu.Lock() // one publisher at a time, so the expected order is known
				want[e.Subject] = append(want[e.Subject], e)
				h.Publish(context.Background(), e)
				mu.Unlock()
			}
		}(uint64(w))
	}
	wg.Wait()
	for _, st := range streams {
		got := drain(st.sub)
		require.Equal(t, want[st.subject], got, "stream of %s", st.subject)
		for _, e := range got {
			require.Equal(t, st.subject, e.Subject)
		}
	}
}

// memBroker is an in-memory stand-in for a message bus shared by the
// instances of a fleet.
type memBroker struct {
	mu        sync.Mutex
	listeners []func(Event)
	ready     chan struct{}
	published int
}

func (b *memBroker) Publish(_ context.Context, e Event) error {
	b.mu.Lock()
	ls := append([]func(Event){}, b.listeners...)
	b.published++
	b.mu.Unlock()
	for _, l := range ls {
		l(e)
	}
	return nil
}

func (b *memBroker) Listen(ctx context.Context, deliver func(Event)) error {
	b.mu.Lock()
	b.listeners = append(b.listeners, deliver)
	b.mu.Unlock()
	b.ready <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// TestBrokerReachesOtherInstances: an event published on one instance
// reaches the subject's streams on every instance, and only those.
func TestBrokerReachesOtherInstances(t *testing.T) {
	b := &memBroker{ready: make(chan struct{}, 2)}
	one, two := New(Options{Broker: b}), New(Options{Broker: b})
	<-b.ready
	<-b.ready
	aliceOnTwo, bobOnTwo, aliceOnOne := two.Subscribe("alice"), two.Subscribe("bob"), one.Subscribe("alice")
	one.ListChanged(context.Background(), "alice")
	assert.Len(t, drain(aliceOnTwo), 1)
	assert.Len(t, drain(aliceOnOne), 1)
	assert.Empty(t, drain(bobOnTwo))
	assert.Equal(t, 1, b.published)
	done := make(chan struct{})
	go func() { one.Close(); two.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close must stop the broker listeners")
	}
}

func BenchmarkPublish(b *testing.B) {
	h := New(Options{})
	defer h.Close()
	subs := make([]*Subscription, 0, 1000)
	for i := range 1000 {
		subs = append(subs, h.Subscribe(fmt.Sprintf("user-%d", i)))
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		h.ListChanged(ctx, "user-7")
		<-subs[7].Events()
		i++
	}
}
