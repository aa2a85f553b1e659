package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// connPool is a minimal pool of *pgx.Conn.
//
// It was written when pgxpool's dependency (github.com/jackc/puddle/v2)
// was not yet in this module; it does what the store needs: at most max connections in use, idle ones reused, broken ones or
// ones left inside a transaction dropped, every wait bounded by ctx.
type connPool struct {
	cfg  *pgx.ConnConfig
	sem  chan struct{}  // a token per connection in use
	idle chan *pgx.Conn // reusable connections

	mu     sync.Mutex
	closed bool
}

var errPoolClosed = errors.New("store: postgres: closed")

func newConnPool(cfg *pgx.ConnConfig, max int) *connPool {
	return &connPool{cfg: cfg, sem: make(chan struct{}, max), idle: make(chan *pgx.Conn, max)}
}

// acquire returns a connection for the caller's exclusive use; give it back
// with release.
func (p *connPool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.isClosed() {
		<-p.sem
		return nil, errPoolClosed
	}
	for {
		select {
		case c := <-p.idle:
			if c.IsClosed() {
				continue
			}
			return c, nil
		default:
		}
		break
	}
	c, err := pgx.ConnectConfig(ctx, p.cfg)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return c, nil
}

// release returns c to the pool, or closes it when it is broken, still in
// a transaction (a rollback that could not be sent), or the pool is closed.
func (p *connPool) release(c *pgx.Conn) {
	defer func() { <-p.sem }()
	if c.IsClosed() {
		return
	}
	if c.PgConn().TxStatus() == 'I' {
		p.mu.Lock()
		kept := false
		if !p.closed {
			select {
			case p.idle <- c: // under mu: close cannot miss it
				kept = true
			default:
			}
		}
		p.mu.Unlock()
		if kept {
			return
		}
	}
	closeConn(c)
}

func (p *connPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// close closes the idle connections; connections in use are closed when
// released.
func (p *connPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for {
		select {
		case c := <-p.idle:
			closeConn(c)
		default:
			return
		}
	}
}

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}
