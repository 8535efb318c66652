package backends

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"iolab/runtimes/go/internal/contract"
)

// SleepSQL is the query of a pg step (PostgreSQL sees `SELECT pg_sleep($1)`: pgx prepares it).
const SleepSQL = "SELECT pg_sleep($1)"

// PG is `pg:MS` through pgx v5's pgxpool, the way a Go team calls PostgreSQL: `pg_pool`
// connections (pgxpool's own default is max(4, GOMAXPROCS at start)), opened on demand, and a
// request waits `--pg-wait` for one before it is answered 503.
type PG struct {
	pool *pgxpool.Pool
	wait time.Duration
}

// NewPG makes the pool; it does not connect until the first call, so a target starts (and
// answers 503 per call) without PostgreSQL.
func NewPG(url string, size int, wait time.Duration) (*PG, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, contract.Errorf(400, "--pg '%s': %v", url, err)
	}
	cfg.MaxConns = int32(size)
	cfg.MinConns = 0
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	cfg.ConnConfig.RuntimeParams["application_name"] = "iolab"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, contract.Errorf(400, "--pg '%s': %v", url, err)
	}
	return &PG{pool: pool, wait: wait}, nil
}

// Sleep runs `SELECT pg_sleep(d)` on a pooled connection.
func (p *PG) Sleep(ctx context.Context, d time.Duration) error {
	actx, cancel := context.WithTimeout(ctx, p.wait)
	conn, err := p.pool.Acquire(actx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return contract.Errorf(503, "backend 'pg' pool timeout after %d ms", p.wait.Milliseconds())
		}
		return contract.Errorf(503, "backend 'pg' unavailable: %s", oneLine(err))
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, SleepSQL, d.Seconds()); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return contract.Errorf(502, "backend 'pg': %s", oneLine(err))
		}
		return contract.Errorf(503, "backend 'pg' unavailable: %s", oneLine(err))
	}
	return nil
}

// Close closes the pool's connections.
func (p *PG) Close() { p.pool.Close() }

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
