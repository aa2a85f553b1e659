package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fillSkills inserts n skills of owner straight into the tables (no
// files: the plan of the listing is what matters), in one transaction.
func fillSkills(t *testing.T, st *skillStore, owner string, n int) {
	t.Helper()
	err := st.r.inTx(context.Background(), "fill", func(exec execFunc) error {
		for i := range n {
			id := fmt.Sprintf("%s-%06d", owner, i)
			key := fmt.Sprintf("2026-01-01T00:00:00.%06dZ/%s", i, id)
			if _, err := exec(`INSERT INTO skills (id, owner, name, frontmatter, order_key) VALUES (?, ?, ?, ?, ?)`, id, owner, "s", "{}", key); err != nil {
				return err
			}
			if _, err := exec(`INSERT INTO skill_access (subject, order_key, skill_id) VALUES (?, ?, ?)`, owner, key, id); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// The skills listing walks skill_access's primary key from the cursor and
// looks skills up by theirs: no scan of the table, no sort, on page 1 as
// on a deep page.
func TestSkillsListUsesIndex(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		s, err := OpenSkills(ctx, b.open(t, Options{}))
		require.NoError(t, err)
		st := s.(*skillStore)
		for i := range 4 {
			fillSkills(t, st, fmt.Sprint("user", i), 2_000)
		}
		fillSkills(t, st, "alice", 5_000)
		deep := "2026-01-01T00:00:00.004500Z/alice-004500"
		prefix := "EXPLAIN QUERY PLAN "
		if b.name == "postgres" {
			prefix = "EXPLAIN "
			require.NoError(t, st.r.inTx(ctx, "analyze", func(exec execFunc) error {
				_, err := exec("ANALYZE skills")
				if err == nil {
					_, err = exec("ANALYZE skill_access")
				}
				return err
			}))
		}
		var plan []string
		for _, after := range []string{"", deep} {
			err := st.r.query(ctx, "explain", prefix+skillsList, []any{"alice", after, 21}, func(scan func(...any) error) error {
				cols := make([]any, 4)
				ptrs := make([]any, 4)
				for i := range cols {
					ptrs[i] = &cols[i]
				}
				n := 4
				if b.name == "postgres" {
					n = 1
				}
				if err := scan(ptrs[:n]...); err != nil {
					return err
				}
				plan = append(plan, fmt.Sprint(cols[n-1]))
				return nil
			})
			require.NoError(t, err)
		}
		text := strings.Join(plan, "\n")
		t.Logf("plan:\n%s", text)
		if b.name == "postgres" {
			assert.Regexp(t, `Index (Only )?Scan using skill_access_pkey on skill_access`, text)
			assert.Contains(t, text, "skills_pkey")
			assert.NotContains(t, text, "Seq Scan")
			assert.NotContains(t, text, "Sort")
		} else {
			assert.Contains(t, text, "SEARCH a USING PRIMARY KEY")
			assert.NotContains(t, text, "TEMP B-TREE")
			assert.NotContains(t, text, "SCAN s")
		}
	})
}
