package store

import (
	"context"
	"fmt"
	"time"
)

// seedDocs are the demo documents: alice has enough for several pages at a
// small page size, bob and carol a few each. Nothing is shared.
var seedDocs = map[string][]string{
	"alice": {
		"Quarterly report Q1", "Quarterly report Q2", "Quarterly report Q3", "Quarterly report Q4",
		"Travel expenses", "Team offsite plan", "Interview notes", "Reading list",
		"Recipe: lentil soup", "Garden layout", "Tax checklist", "Holiday ideas",
	},
	"bob":   {"Bob's budget", "Bob's medical notes", "Bob's password hints (not really)"},
	"carol": {"Carol's thesis outline", "Carol's conference talk"},
}

// seedSubjects are the users Seed gives documents to, in order.
var seedSubjects = []string{"alice", "bob", "carol"}

// Seed gives alice 12 documents, bob 3 and carol 2, all text/plain and
// private, listed in a fixed order. A user who already has a visible
// document is left alone, so Seed can run at every start of a server on a
// persistent database.
func Seed(ctx context.Context, st Store) error {
	return SeedOwners(ctx, st, func(subject string) string { return subject })
}

// SeedOwners is Seed with the owner keys that owner gives each demo user:
// on a server that trusts several issuers, the users of one issuer are
// principal.SubjectKey(issuer, subject).
func SeedOwners(ctx context.Context, st Store, owner func(subject string) string) error {
	for _, name := range seedSubjects {
		subject := owner(name)
		have, err := st.List(ctx, subject, "", 1)
		if err != nil {
			return err
		}
		if len(have) > 0 {
			continue
		}
		titles := seedDocs[name]
		docs := make([]NewDocument, len(titles))
		for i, title := range titles {
			docs[i] = NewDocument{
				Owner: subject, Title: title, MIMEType: "text/plain",
				Body: fmt.Sprintf("%s\n\nA private document of %s.\n", title, name),
			}
		}
		if err := createAll(ctx, st, docs); err != nil {
			return err
		}
	}
	return nil
}

// bulkCreator is implemented by this package's adapters: insert prepared
// documents in one transaction, the fast way for each database.
type bulkCreator interface {
	createMany(ctx context.Context, docs []Document) error
	now() time.Time
}

// SeedMany inserts n documents owned by subject in one transaction (all or
// none), for load tests: 100,000 take a few seconds on SQLite. Their
// titles are numbered, and their order keys follow the numbers. A Store
// from another package gets n Creates.
func SeedMany(ctx context.Context, st Store, subject string, n int) error {
	if err := checkSubject("subject", subject); err != nil {
		return err
	}
	if n < 0 {
		return fmt.Errorf("%w: negative count", ErrInvalid)
	}
	docs := make([]NewDocument, n)
	for i := range docs {
		docs[i] = seedDoc(subject, i)
	}
	return createAll(ctx, st, docs)
}

// createAll creates docs in one transaction when st is one of this
// package's adapters, with creation times one microsecond apart ending
// now, so that they list in the order given; else one Create each.
func createAll(ctx context.Context, st Store, docs []NewDocument) error {
	bulk, ok := st.(bulkCreator)
	if !ok {
		for _, nd := range docs {
			if _, err := st.Create(ctx, nd); err != nil {
				return err
			}
		}
		return nil
	}
	now := bulk.now()
	prepared := make([]Document, len(docs))
	for i, nd := range docs {
		created := now.Add(-time.Duration(len(docs)-1-i) * time.Microsecond)
		d, err := prepare(nd, created)
		if err != nil {
			return err
		}
		prepared[i] = d
	}
	return bulk.createMany(ctx, prepared)
}

func seedDoc(subject string, i int) NewDocument {
	return NewDocument{
		Owner: subject, MIMEType: "text/plain",
		Title: fmt.Sprintf("%s's document %06d", subject, i),
		Body:  fmt.Sprintf("Document %d of %s.\n", i, subject),
	}
}
